# frozen_string_literal: true

# Runs the walk-through's steps against real tagqds (one plain, one with
# --auth) and checks what each returns. tagqd is TAGQD_BIN, else built from
# this repository with `go build ./cmd/tagqd`. Run by run_tests.sh.

require 'minitest/autorun'
require 'securerandom'
require 'tmpdir'

require_relative '../examples/walkthrough'

# A real tagqd on its embedded store, on free loopback ports. It prints one
# line, TAGQ_READY grpc=HOST:PORT http=HOST:PORT, once it serves.
class Tagqd
  ROOT = File.expand_path('../../..', __dir__)

  attr_reader :grpc_addr

  def self.binary
    @binary ||= ENV.fetch('TAGQD_BIN', '').then do |bin|
      next bin unless bin.empty?

      dir = Dir.mktmpdir('tagqd-ruby-')
      Minitest.after_run { FileUtils.rm_rf(dir) }
      bin = File.join(dir, 'tagqd')
      system('go', 'build', '-o', bin, './cmd/tagqd', chdir: ROOT, exception: true)
      bin
    end
  end

  def initialize(*flags, env: {})
    cmd = [self.class.binary, '--grpc-addr', '127.0.0.1:0', '--http-addr', '127.0.0.1:0', '--sqs-addr', '127.0.0.1:0', '--log-level', 'error',
           *flags]
    @io = IO.popen(env, cmd)
    line = @io.gets.to_s # blocks until tagqd is ready or exits
    unless line.start_with?('TAGQ_READY ')
      Process.kill('KILL', @io.pid)
      raise "tagqd did not start: first line #{line.inspect}"
    end
    @grpc_addr = line.split.drop(1).to_h { |f| f.split('=', 2) }.fetch('grpc')
  end

  # SIGTERM; returns tagqd's exit code (0 when it stopped cleanly).
  def stop
    Process.kill('TERM', @io.pid)
    600.times do # up to 30 s
      _, status = Process.wait2(@io.pid, Process::WNOHANG)
      return status.exitstatus || 128 if status

      sleep 0.05
    end
    Process.kill('KILL', @io.pid)
    -1
  ensure
    @io.close
  end
end

ADMIN_KEY = 'the Ruby walkthrough bootstrap admin key, 32+'
PLAIN = Tagqd.new
AUTH = Tagqd.new('--auth', env: { 'TAGQ_ADMIN_KEY' => ADMIN_KEY })
Minitest.after_run do
  codes = [PLAIN.stop, AUTH.stop]
  raise "tagqd exit codes on SIGTERM: #{codes}" unless codes == [0, 0]
end

class WalkthroughTest < Minitest::Test
  Walkthrough = TagqExample::Walkthrough

  def unique(what)
    "ruby-#{what}-#{SecureRandom.hex(4)}"
  end

  def assert_state(state, received:, deleted:, dead:, in_flight:, available:)
    assert_equal({ received: received, deleted: deleted, dead: dead, in_flight: in_flight, available: available },
                 { received: state.received_total, deleted: state.deleted_total, dead: state.dead_total,
                   in_flight: state.in_flight, available: state.available })
  end

  def test_two_tags_batch_nack_until_dead_and_the_dead_letter
    w = Walkthrough.new(PLAIN.grpc_addr)
    q = unique('orders')
    dlq = "#{q}-dlq"
    assert_equal %w[billing shipping], w.create_queue(q, dlq, %w[billing shipping])
    ids = w.send_batch(q, ['order 1', 'order 2', 'poison', 'order 4'])
    assert_equal 4, ids.uniq.size

    billing = w.work(q, 'billing') { true }
    assert_equal [4, 4, 0], billing.to_a
    # shipping refuses the poison message: nacked on its 1st and 2nd
    # receive, dead-lettered by the 3rd (max_receive_count 2).
    shipping = w.work(q, 'shipping') { |m| m.body != 'poison' }
    assert_equal [5, 3, 2], shipping.to_a
    assert_state w.tag_state(q, 'billing'), received: 4, deleted: 4, dead: 0, in_flight: 0, available: 0
    assert_state w.tag_state(q, 'shipping'), received: 5, deleted: 3, dead: 1, in_flight: 0, available: 0

    dead = w.take_dead_letters(dlq)
    assert_equal 1, dead.size
    d = dead.first
    assert_equal 'poison', d.body
    assert_equal q, d.dead_letter.source_queue_name
    assert_equal 'shipping', d.dead_letter.source_tag
    assert_equal 'MAX_RECEIVE_COUNT_EXCEEDED', d.dead_letter.reason
    assert_equal ids[2], d.dead_letter.original_message_id
    assert_equal 2, d.dead_letter.original_receive_count
    refute_nil d.dead_letter.dead_timestamp
    assert_equal 'eu', d.attributes['region'].string_value
    assert_equal q, d.attributes['DLQ.sourceQueue'].string_value
    assert_empty w.take_dead_letters(dlq), 'taken and deleted'
  end

  def test_error_info_reason_and_field
    w = Walkthrough.new(PLAIN.grpc_addr)
    info = w.try_create_queue('not a name')
    refute_nil info
    assert_equal %w[INVALID_NAME tagq queue.name], [info.reason, info.domain, info.metadata['field']]
    assert_nil w.try_create_queue(unique('ok')), 'a valid name is created'

    q = unique('nf')
    w.create_queue(q, "#{q}-dlq", ['t'])
    err = assert_raises(GRPC::NotFound) { w.tag_state(q, 'missing') }
    nf = TagqExample.error_info(err)
    assert_equal %w[TAG_NOT_FOUND name missing], [nf.reason, nf.metadata['field'], nf.metadata['tag']]
  end

  def test_consume_stream_receives_and_acks
    w = Walkthrough.new(PLAIN.grpc_addr)
    q = unique('stream')
    w.create_queue(q, "#{q}-dlq", ['worker'])
    w.send_batch(q, %w[a b c])
    c = w.consume(q, 'worker', 3)
    assert_equal %w[a b c], c.bodies
    assert_equal [:CONSUME_OPERATION_ACK] * 3, c.confirmations
    assert_state w.tag_state(q, 'worker'), received: 3, deleted: 3, dead: 0, in_flight: 0, available: 0
  end

  def test_api_key_on_tagqd_with_auth
    [nil, 'tagq_nosuchkey_0000'].each do |key|
      err = assert_raises(GRPC::Unauthenticated) { Walkthrough.new(AUTH.grpc_addr, api_key: key).tag_state('any', 'any') }
      assert_equal 'UNAUTHENTICATED', TagqExample.error_info(err).reason
    end

    q = unique('auth')
    admin = Walkthrough.new(AUTH.grpc_addr, api_key: ADMIN_KEY)
    assert_equal ['app'], admin.create_queue(q, "#{q}-dlq", ['app'])
    opts = admin.call_opts
    admin.access.create_principal(Tagq::V1::CreatePrincipalRequest.new(
      principal: Tagq::V1::Principal.new(name: 'ruby-app')
    ), **opts)
    admin.access.set_permission(Tagq::V1::SetPermissionRequest.new(grant: Tagq::V1::PermissionGrant.new(
      principal: 'ruby-app', queue: q, permission: :PERMISSION_SEND_HANDLE
    )), **opts)
    key = admin.access.issue_key(Tagq::V1::IssueKeyRequest.new(principal: 'ruby-app'), **opts).api_key

    app = Walkthrough.new(AUTH.grpc_addr, api_key: key)
    app.send_batch(q, %w[x y])
    c = app.consume(q, 'app', 2) # the stream carries the key too
    assert_equal %w[x y], c.bodies
    assert_equal [:CONSUME_OPERATION_ACK] * 2, c.confirmations
    err = assert_raises(GRPC::PermissionDenied) { app.tag_state(q, 'app') }
    denied = TagqExample.error_info(err)
    assert_equal %w[PERMISSION_DENIED GET_QUEUE_INFO], [denied.reason, denied.metadata['permission']]
    assert_state admin.tag_state(q, 'app'), received: 2, deleted: 2, dead: 0, in_flight: 0, available: 0
  end

  def test_the_example_program_runs
    example = File.expand_path('../examples/walkthrough.rb', __dir__)
    lib = File.expand_path('../lib', __dir__)
    [[PLAIN.grpc_addr], [AUTH.grpc_addr, ADMIN_KEY]].each do |args|
      out = IO.popen(['ruby', '-I', lib, example, *args], err: %i[child out], &:read)
      assert Process.last_status.success?, out
      assert_includes out, 'shipping: deleted 3, nacked 2'
      assert_includes out, 'confirmed [:CONSUME_OPERATION_ACK, :CONSUME_OPERATION_ACK]'
    end
  end
end
