# frozen_string_literal: true

# A walk through tagq from Ruby with the generated stubs alone: a queue read
# by two tags, a batch send, receive and delete on each tag, a message nacked
# until its redrive policy dead-letters it, the dead letter read back with
# its origin, an error's ErrorInfo, and a Consume stream. Every call carries
# an API key when one is given (tagqd --auth).
#
#   ruby -I clients/ruby/lib clients/ruby/examples/walkthrough.rb 127.0.0.1:9090 [api-key]
#
# test/walkthrough_test.rb runs each step against a real tagqd and checks
# what it returns.

require 'google/protobuf/well_known_types' # Any#unpack
require 'grpc'
require 'google/rpc/error_details_pb' # Google::Rpc::ErrorInfo (Debian: ruby-googleapis-common-protos-types)
require 'tagq/v1/access_services_pb'
require 'tagq/v1/message_services_pb'
require 'tagq/v1/queue_services_pb'

module TagqExample
  # Adds "authorization: Bearer <key>" to every call: tagq's are unary or
  # bidirectional streams (Publish, Consume). An interceptor rather than
  # call credentials, which gRPC sends only over a secure channel: this
  # works on plaintext loopback too. Across a network use TLS
  # (GRPC::Core::ChannelCredentials), as the key is a secret.
  class BearerAuth < GRPC::ClientInterceptor
    def initialize(api_key)
      super()
      @value = "Bearer #{api_key}"
    end

    def request_response(metadata:, **)
      metadata['authorization'] = @value
      yield
    end

    def bidi_streamer(metadata:, **)
      metadata['authorization'] = @value
      yield
    end
  end

  # The google.rpc.ErrorInfo of a failed call (reason, domain "tagq",
  # metadata "field" naming the request field at fault), or nil when it has
  # none (a transport error). tagqd sends a google.rpc.Status in the
  # grpc-status-details-bin trailer; GRPC::BadStatus#to_rpc_status decodes it.
  def self.error_info(error)
    status = error.to_rpc_status
    return nil if status.nil?

    status.details.each do |any|
      info = any.unpack(Google::Rpc::ErrorInfo)
      return info if info
    end
    nil
  end

  # What Walkthrough#work did.
  Worked = Struct.new(:received, :deleted, :nacked)
  # What Walkthrough#consume saw: the bodies pushed, in order, and the acks'
  # confirmations (:CONSUME_OPERATION_ACK when applied, else the error's reason).
  Consumed = Struct.new(:bodies, :confirmations)

  class Walkthrough
    # Deadline of every call, in seconds (a Consume stream gets three times as long).
    DEADLINE = 10

    attr_reader :access

    # Connects to tagqd at target (host:port, plaintext), with an API key if given.
    def initialize(target, api_key: nil)
      opts = { interceptors: api_key.to_s.empty? ? [] : [BearerAuth.new(api_key)] }
      @queues = Tagq::V1::QueueService::Stub.new(target, :this_channel_is_insecure, **opts)
      @messages = Tagq::V1::MessageService::Stub.new(target, :this_channel_is_insecure, **opts)
      @access = Tagq::V1::AccessService::Stub.new(target, :this_channel_is_insecure, **opts)
    end

    # Options of every unary call.
    def call_opts
      { deadline: Time.now + DEADLINE }
    end

    # Creates the dead-letter queue dlq, then queue with a redrive policy to
    # it (dead-letter after 2 receives by one tag), no default tag, and the
    # tags given. Returns the queue's tags as ListTags names them.
    def create_queue(queue, dlq, tags)
      @queues.create_queue(Tagq::V1::CreateQueueRequest.new(
        queue: Tagq::V1::Queue.new(name: dlq, dead_letter_queue: true)
      ), **call_opts)
      @queues.create_queue(Tagq::V1::CreateQueueRequest.new(
        queue: Tagq::V1::Queue.new(
          name: queue,
          redrive_policy: Tagq::V1::RedrivePolicy.new(dead_letter_queue: dlq, max_receive_count: 2)
        ),
        no_default_tag: true # every reader names its tag
      ), **call_opts)
      tags.each do |tag|
        @queues.create_tag(Tagq::V1::CreateTagRequest.new(queue: queue, tag: Tagq::V1::Tag.new(name: tag)), **call_opts)
      end
      @queues.list_tags(Tagq::V1::ListTagsRequest.new(queue: queue), **call_opts).tags.map(&:name)
    end

    # Sends the bodies in one batch, each with attribute region=eu; returns
    # their message ids in order.
    def send_batch(queue, bodies)
      entries = bodies.each_with_index.map do |body, i|
        Tagq::V1::SendMessageBatchEntry.new(
          id: "m#{i}", # names the entry in the response
          body: body,
          attributes: { 'region' => Tagq::V1::MessageAttribute.new(string_value: 'eu') }
        )
      end
      resp = @messages.send_message_batch(Tagq::V1::SendMessageBatchRequest.new(queue: queue, entries: entries),
                                          **call_opts)
      # Entries fail one by one, with a reason and a field.
      raise "batch entries refused: #{resp.failed.map(&:to_h)}" unless resp.failed.empty?

      ids = Array.new(bodies.size)
      resp.successful.each { |r| ids[r.id.delete_prefix('m').to_i] = r.message_id }
      ids
    end

    # Receives the tag's messages until a receive returns none. Each message
    # the block accepts (returns true for) is deleted, one DeleteMessageBatch
    # per receive; each it refuses is nacked (visibility 0), so the tag
    # receives it again, until the queue's redrive policy moves it to the
    # dead-letter queue.
    def work(queue, tag)
      w = Worked.new(0, 0, 0)
      loop do
        got = @messages.receive_message(Tagq::V1::ReceiveMessageRequest.new(
          queue: queue, tag: tag, max_messages: 10, wait_seconds: 0
        ), **call_opts).messages
        return w if got.empty?

        w.received += got.size
        done = []
        got.each do |m|
          if yield(m)
            done << Tagq::V1::DeleteMessageBatchEntry.new(id: "d#{done.size}", receipt_handle: m.receipt_handle)
          else
            @messages.change_message_visibility(Tagq::V1::ChangeMessageVisibilityRequest.new(
              queue: queue, receipt_handle: m.receipt_handle, visibility_seconds: 0
            ), **call_opts)
            w.nacked += 1
          end
        end
        next if done.empty?

        resp = @messages.delete_message_batch(Tagq::V1::DeleteMessageBatchRequest.new(queue: queue, entries: done),
                                              **call_opts)
        raise "deletes refused: #{resp.failed.map(&:to_h)}" unless resp.failed.empty?

        w.deleted += resp.successful.size
      end
    end

    # Receives up to 10 dead letters from the dead-letter queue's default
    # tag and deletes them.
    def take_dead_letters(dlq)
      got = @messages.receive_message(Tagq::V1::ReceiveMessageRequest.new(
        queue: dlq, max_messages: 10, wait_seconds: 0
      ), **call_opts).messages.to_a
      unless got.empty?
        entries = got.each_with_index.map do |m, i|
          Tagq::V1::DeleteMessageBatchEntry.new(id: "d#{i}", receipt_handle: m.receipt_handle)
        end
        @messages.delete_message_batch(Tagq::V1::DeleteMessageBatchRequest.new(queue: dlq, entries: entries),
                                       **call_opts)
      end
      got
    end

    # A tag's exact counters.
    def tag_state(queue, tag)
      @queues.get_tag(Tagq::V1::GetTagRequest.new(queue: queue, name: tag), **call_opts).tag.state
    end

    # Creates a queue named name; returns the ErrorInfo of the error it
    # failed with, or nil if it was created.
    def try_create_queue(name)
      @queues.create_queue(Tagq::V1::CreateQueueRequest.new(queue: Tagq::V1::Queue.new(name: name)), **call_opts)
      nil
    rescue GRPC::BadStatus => e
      TagqExample.error_info(e)
    end

    # Opens a Consume stream on the tag, acks each of the first n messages it
    # pushes (asking for confirmations), waits for the n confirmations, then
    # closes its side and reads until the server ends the stream.
    def consume(queue, tag, n)
      # gRPC writes the requests from its own thread, taking them from this
      # enumerator; :close ends it, which half-closes the stream.
      outbox = Queue.new
      requests = Enumerator.new do |y|
        while (r = outbox.pop) != :close
          y << r
        end
      end
      outbox << Tagq::V1::ConsumeRequest.new(open: Tagq::V1::ConsumeOpen.new(
        queue: queue, tag: tag, max_outstanding_messages: n,
        confirm: true # answer each ack once it is durable
      ))
      out = Consumed.new([], [])
      closed = false
      @messages.consume(requests, deadline: Time.now + 3 * DEADLINE).each do |r|
        acks = r.messages.map do |m|
          out.bodies << m.message.body
          m.delivery_id # settle by delivery id, cheaper than a receipt handle
        end
        outbox << Tagq::V1::ConsumeRequest.new(acks: acks) unless acks.empty? || closed
        r.confirmations.each do |c|
          out.confirmations << (c.error ? c.error.reason : c.operation)
        end
        if out.confirmations.size >= n && !closed
          outbox << :close # tagqd ends the stream in turn
          closed = true
        end
      end
      out
    ensure
      outbox << :close unless closed # let gRPC's writer thread finish
    end
  end

  # Runs the walk-through against tagqd at target.
  def self.main(target, api_key)
    q = "ruby-orders-#{Process.pid}"
    dlq = "#{q}-dlq"
    w = Walkthrough.new(target, api_key: api_key)
    puts "tags: #{w.create_queue(q, dlq, %w[billing shipping])}"
    puts "sent #{w.send_batch(q, ['order 1', 'order 2', 'poison', 'order 4']).size}"
    billing = w.work(q, 'billing') { true }
    puts "billing: deleted #{billing.deleted}"
    shipping = w.work(q, 'shipping') { |m| m.body != 'poison' }
    puts "shipping: deleted #{shipping.deleted}, nacked #{shipping.nacked}"
    w.take_dead_letters(dlq).each do |d|
      dl = d.dead_letter
      puts "dead letter #{d.body} from #{dl.source_queue_name}/#{dl.source_tag}: #{dl.reason} " \
           "after #{dl.original_receive_count} receives"
    end
    e = w.try_create_queue('not a name')
    puts "error: #{e.reason} field #{e.metadata['field']}"
    w.send_batch(q, ['streamed 1', 'streamed 2'])
    c = w.consume(q, 'billing', 2)
    puts "consumed #{c.bodies}, confirmed #{c.confirmations}"
  end
end

TagqExample.main(ARGV[0] || '127.0.0.1:9090', ARGV[1] || ENV['TAGQ_API_KEY']) if $PROGRAM_NAME == __FILE__
