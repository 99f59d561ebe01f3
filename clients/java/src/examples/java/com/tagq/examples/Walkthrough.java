package com.tagq.examples;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.tagq.rpc.ErrorInfo;
import com.tagq.v1.ChangeMessageVisibilityRequest;
import com.tagq.v1.ConsumeOpen;
import com.tagq.v1.ConsumeRequest;
import com.tagq.v1.ConsumeResponse;
import com.tagq.v1.CreateQueueRequest;
import com.tagq.v1.CreateTagRequest;
import com.tagq.v1.DeleteMessageBatchEntry;
import com.tagq.v1.DeleteMessageBatchRequest;
import com.tagq.v1.DeleteMessageBatchResponse;
import com.tagq.v1.GetTagRequest;
import com.tagq.v1.ListTagsRequest;
import com.tagq.v1.Message;
import com.tagq.v1.MessageAttribute;
import com.tagq.v1.MessageServiceGrpc;
import com.tagq.v1.Queue;
import com.tagq.v1.QueueServiceGrpc;
import com.tagq.v1.ReceiveMessageRequest;
import com.tagq.v1.RedrivePolicy;
import com.tagq.v1.SendMessageBatchEntry;
import com.tagq.v1.SendMessageBatchRequest;
import com.tagq.v1.SendMessageBatchResponse;
import com.tagq.v1.SendMessageBatchResult;
import com.tagq.v1.Tag;
import com.tagq.v1.TagState;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A walk through tagq from Java with the generated stubs alone: a queue read by
 * two tags, a batch send, receive and delete on each tag, a message nacked
 * until its redrive policy dead-letters it, the dead letter read back with its
 * origin, an error's ErrorInfo, and a Consume stream. Every call carries an API
 * key when one is given (tagqd --auth).
 *
 * <pre>
 *   java -cp ... com.tagq.examples.Walkthrough 127.0.0.1:9090 [api-key]
 * </pre>
 *
 * <p>WalkthroughTest runs each step against a real tagqd and checks what it
 * returns.
 */
public final class Walkthrough implements AutoCloseable {
  /** Every call gets this deadline. */
  static final long DEADLINE_SECONDS = 10;

  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private final ManagedChannel channel;
  final QueueServiceGrpc.QueueServiceBlockingStub queues;
  final MessageServiceGrpc.MessageServiceBlockingStub messages;
  final MessageServiceGrpc.MessageServiceStub streams;
  /** The channel the stubs use (with the API key, if any), for other services. */
  final Channel calls;

  /**
   * Connects to tagqd at target (host:port, plaintext). With an apiKey, every
   * call, streams included, carries "authorization: Bearer apiKey", added
   * by an interceptor on the channel. Plaintext is for loopback: over a
   * network use TLS (useTransportSecurity()), as the key is a secret.
   */
  public Walkthrough(String target, String apiKey) {
    channel = ManagedChannelBuilder.forTarget(target).usePlaintext().build();
    Channel c = channel;
    if (apiKey != null && !apiKey.isEmpty()) {
      Metadata md = new Metadata();
      md.put(AUTHORIZATION, "Bearer " + apiKey);
      c = ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(md));
    }
    calls = c;
    queues = QueueServiceGrpc.newBlockingStub(c);
    messages = MessageServiceGrpc.newBlockingStub(c);
    streams = MessageServiceGrpc.newStub(c);
  }

  private QueueServiceGrpc.QueueServiceBlockingStub queues() {
    return queues.withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS);
  }

  private MessageServiceGrpc.MessageServiceBlockingStub messages() {
    return messages.withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS);
  }

  /**
   * Creates the dead-letter queue dlq, then queue with a redrive policy to it
   * (dead-letter after 2 receives by one tag), no default tag, and the tags
   * given. Returns the queue's tags as ListTags names them.
   */
  public List<String> createQueue(String queue, String dlq, String... tags) {
    queues().createQueue(CreateQueueRequest.newBuilder()
        .setQueue(Queue.newBuilder().setName(dlq).setDeadLetterQueue(true))
        .build());
    queues().createQueue(CreateQueueRequest.newBuilder()
        .setQueue(Queue.newBuilder().setName(queue)
            .setRedrivePolicy(RedrivePolicy.newBuilder().setDeadLetterQueue(dlq).setMaxReceiveCount(2)))
        .setNoDefaultTag(true) // every reader names its tag
        .build());
    for (String tag : tags) {
      queues().createTag(CreateTagRequest.newBuilder()
          .setQueue(queue).setTag(Tag.newBuilder().setName(tag)).build());
    }
    List<String> names = new ArrayList<>();
    for (Tag t : queues().listTags(ListTagsRequest.newBuilder().setQueue(queue).build()).getTagsList()) {
      names.add(t.getName());
    }
    return names;
  }

  /** Sends the bodies in one batch, each with attribute region=eu; returns their message ids in order. */
  public List<String> sendBatch(String queue, List<String> bodies) {
    SendMessageBatchRequest.Builder req = SendMessageBatchRequest.newBuilder().setQueue(queue);
    for (int i = 0; i < bodies.size(); i++) {
      req.addEntries(SendMessageBatchEntry.newBuilder()
          .setId("m" + i) // names the entry in the response
          .setBody(ByteString.copyFromUtf8(bodies.get(i)))
          .putAttributes("region", MessageAttribute.newBuilder().setStringValue("eu").build()));
    }
    SendMessageBatchResponse resp = messages().sendMessageBatch(req.build());
    if (resp.getFailedCount() > 0) { // entries fail one by one, with a reason and a field
      throw new IllegalStateException("batch entries refused: " + resp.getFailedList());
    }
    String[] ids = new String[bodies.size()];
    for (SendMessageBatchResult r : resp.getSuccessfulList()) {
      ids[Integer.parseInt(r.getId().substring(1))] = r.getMessageId();
    }
    return List.of(ids);
  }

  /** What {@link #work} did. */
  public static final class Worked {
    /** Receives that returned a message (redeliveries too). */
    public int received;
    /** Messages the handler took, deleted in one batch per receive. */
    public int deleted;
    /** Messages the handler refused, made visible again at once. */
    public int nacked;
  }

  /**
   * Receives the tag's messages until a receive returns none. Each message the
   * handler accepts is deleted (one DeleteMessageBatch per receive); each it
   * refuses is nacked (visibility 0), so the tag receives it again, until the
   * queue's redrive policy moves it to the dead-letter queue.
   */
  public Worked work(String queue, String tag, Predicate<Message> handler) {
    Worked w = new Worked();
    while (true) {
      List<Message> got = messages().receiveMessage(ReceiveMessageRequest.newBuilder()
          .setQueue(queue).setTag(tag).setMaxMessages(10).setWaitSeconds(0).build()).getMessagesList();
      if (got.isEmpty()) {
        return w;
      }
      w.received += got.size();
      DeleteMessageBatchRequest.Builder done = DeleteMessageBatchRequest.newBuilder().setQueue(queue);
      for (Message m : got) {
        if (handler.test(m)) {
          done.addEntries(DeleteMessageBatchEntry.newBuilder()
              .setId("d" + done.getEntriesCount()) // names the entry in the response
              .setReceiptHandle(m.getReceiptHandle()));
        } else {
          messages().changeMessageVisibility(ChangeMessageVisibilityRequest.newBuilder()
              .setQueue(queue).setReceiptHandle(m.getReceiptHandle()).setVisibilitySeconds(0).build());
          w.nacked++;
        }
      }
      if (done.getEntriesCount() > 0) {
        DeleteMessageBatchResponse r = messages().deleteMessageBatch(done.build());
        if (r.getFailedCount() > 0) {
          throw new IllegalStateException("deletes refused: " + r.getFailedList());
        }
        w.deleted += r.getSuccessfulCount();
      }
    }
  }

  /** Receives up to 10 dead letters from the dead-letter queue's default tag and deletes them. */
  public List<Message> takeDeadLetters(String dlq) {
    List<Message> got = messages().receiveMessage(ReceiveMessageRequest.newBuilder()
        .setQueue(dlq).setMaxMessages(10).setWaitSeconds(0).build()).getMessagesList();
    DeleteMessageBatchRequest.Builder done = DeleteMessageBatchRequest.newBuilder().setQueue(dlq);
    for (int i = 0; i < got.size(); i++) {
      done.addEntries(DeleteMessageBatchEntry.newBuilder()
          .setId("d" + i).setReceiptHandle(got.get(i).getReceiptHandle()));
    }
    if (!got.isEmpty()) {
      messages().deleteMessageBatch(done.build());
    }
    return got;
  }

  /** A tag's exact counters. */
  public TagState tagState(String queue, String tag) {
    return queues().getTag(GetTagRequest.newBuilder().setQueue(queue).setName(tag).build()).getTag().getState();
  }

  /**
   * The google.rpc.ErrorInfo of a failed call (reason, domain "tagq", metadata
   * "field" naming the request field at fault), or null when it has none (a
   * transport error). tagqd sends it in the grpc-status-details-bin trailer,
   * which StatusProto decodes. ErrorInfo is com.tagq.rpc.ErrorInfo, generated
   * from clients/proto: Debian's proto-google-common-protos (1.16) has
   * com.google.rpc.Status but not yet ErrorInfo; with 1.18 or later, import
   * com.google.rpc.ErrorInfo instead (the same type on the wire).
   */
  public static ErrorInfo errorInfo(StatusRuntimeException e) {
    com.google.rpc.Status status = StatusProto.fromThrowable(e);
    if (status == null) {
      return null;
    }
    for (com.google.protobuf.Any detail : status.getDetailsList()) {
      if (detail.is(ErrorInfo.class)) {
        try {
          return detail.unpack(ErrorInfo.class);
        } catch (InvalidProtocolBufferException bad) {
          return null;
        }
      }
    }
    return null;
  }

  /** Creates a queue named name, returning the ErrorInfo of the error it failed with (null if it was created). */
  public ErrorInfo tryCreateQueue(String name) {
    try {
      queues().createQueue(CreateQueueRequest.newBuilder().setQueue(Queue.newBuilder().setName(name)).build());
      return null;
    } catch (StatusRuntimeException e) {
      return errorInfo(e);
    }
  }

  /** What {@link #consume} saw. */
  public static final class Consumed {
    /** Bodies of the messages pushed, in order. */
    public final List<String> bodies = new ArrayList<>();
    /** Confirmations of the acks: the operation (CONSUME_OPERATION_ACK) when applied, else the StreamError's reason. */
    public final List<String> confirmations = new ArrayList<>();
  }

  /**
   * Opens a Consume stream on the tag, acks each of the first n messages it
   * pushes (asking for confirmations), waits for the n confirmations, then
   * closes its side and waits for the server to end the stream.
   */
  public Consumed consume(String queue, String tag, int n) throws InterruptedException {
    // Responses and the stream's end arrive on gRPC's threads; this thread
    // takes them from a queue, and alone writes to the request stream (a
    // StreamObserver is not thread-safe).
    BlockingQueue<Object> events = new LinkedBlockingQueue<>();
    Object completed = new Object();
    StreamObserver<ConsumeRequest> requests = streams
        .withDeadlineAfter(DEADLINE_SECONDS * 3, TimeUnit.SECONDS)
        .consume(new StreamObserver<ConsumeResponse>() {
          @Override public void onNext(ConsumeResponse r) { events.add(r); }
          @Override public void onError(Throwable t) { events.add(t); }
          @Override public void onCompleted() { events.add(completed); }
        });
    requests.onNext(ConsumeRequest.newBuilder().setOpen(ConsumeOpen.newBuilder()
        .setQueue(queue).setTag(tag).setMaxOutstandingMessages(n).setConfirm(true)).build());
    Consumed out = new Consumed();
    boolean closed = false;
    while (true) {
      Object ev = events.poll(DEADLINE_SECONDS * 3, TimeUnit.SECONDS);
      if (ev == null) {
        requests.onError(new IllegalStateException("timed out"));
        throw new IllegalStateException("Consume: nothing for " + DEADLINE_SECONDS * 3 + " s; got " + out.bodies);
      }
      if (ev == completed) {
        return out;
      }
      if (ev instanceof Throwable) {
        throw new IllegalStateException("Consume failed", (Throwable) ev);
      }
      ConsumeResponse r = (ConsumeResponse) ev;
      ConsumeRequest.Builder acks = ConsumeRequest.newBuilder();
      for (var m : r.getMessagesList()) {
        out.bodies.add(m.getMessage().getBody().toStringUtf8());
        acks.addAcks(m.getDeliveryId()); // settle by delivery id, cheaper than a receipt handle
      }
      if (acks.getAcksCount() > 0) {
        requests.onNext(acks.build());
      }
      for (var c : r.getConfirmationsList()) {
        out.confirmations.add(c.hasError() ? c.getError().getReason() : c.getOperation().name());
      }
      if (out.confirmations.size() >= n && !closed) {
        requests.onCompleted(); // the server ends the stream in turn
        closed = true;
      }
    }
  }

  @Override
  public void close() {
    channel.shutdown();
    try {
      channel.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      channel.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  /** Runs the walk-through against tagqd at args[0], with the API key args[1] if given. */
  public static void main(String[] args) throws Exception {
    String target = args.length > 0 ? args[0] : "127.0.0.1:9090";
    String key = args.length > 1 ? args[1] : System.getenv("TAGQ_API_KEY");
    String q = "java-orders-" + ProcessHandle.current().pid();
    String dlq = q + "-dlq";
    try (Walkthrough w = new Walkthrough(target, key)) {
      System.out.println("tags: " + w.createQueue(q, dlq, "billing", "shipping"));
      List<String> ids = w.sendBatch(q, List.of("order 1", "order 2", "poison", "order 4"));
      System.out.println("sent " + ids.size());
      Worked billing = w.work(q, "billing", m -> true);
      System.out.println("billing: deleted " + billing.deleted);
      Worked shipping = w.work(q, "shipping", m -> !m.getBody().toStringUtf8().equals("poison"));
      System.out.println("shipping: deleted " + shipping.deleted + ", nacked " + shipping.nacked);
      for (Message d : w.takeDeadLetters(dlq)) {
        System.out.println("dead letter " + d.getBody().toStringUtf8() + " from " + d.getDeadLetter().getSourceQueueName()
            + "/" + d.getDeadLetter().getSourceTag() + ": " + d.getDeadLetter().getReason()
            + " after " + d.getDeadLetter().getOriginalReceiveCount() + " receives");
      }
      ErrorInfo e = w.tryCreateQueue("not a name");
      System.out.println("error: " + e.getReason() + " field " + e.getMetadataOrDefault("field", ""));
      w.sendBatch(q, List.of("streamed 1", "streamed 2"));
      Consumed c = w.consume(q, "billing", 2);
      System.out.println("consumed " + c.bodies + ", confirmed " + c.confirmations);
    }
  }
}
