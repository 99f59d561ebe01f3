package com.tagq.examples;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import com.tagq.rpc.ErrorInfo;
import com.tagq.v1.AccessServiceGrpc;
import com.tagq.v1.CreatePrincipalRequest;
import com.tagq.v1.IssueKeyRequest;
import com.tagq.v1.Message;
import com.tagq.v1.Permission;
import com.tagq.v1.PermissionGrant;
import com.tagq.v1.Principal;
import com.tagq.v1.SetPermissionRequest;
import com.tagq.v1.TagState;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.UUID;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/** Runs the Walkthrough's steps against real tagqds (one plain, one with --auth) and checks what each returns. */
public class WalkthroughTest {
  private static final String ADMIN_KEY = "the Java walkthrough's bootstrap admin key, 32+";
  private static Tagqd plain;
  private static Tagqd auth;

  @BeforeClass
  public static void startTagqd() throws Exception {
    plain = new Tagqd(List.of());
    auth = new Tagqd(List.of("--auth"), "TAGQ_ADMIN_KEY", ADMIN_KEY);
  }

  @AfterClass
  public static void stopTagqd() throws Exception {
    int plainExit = plain == null ? 0 : plain.stop();
    int authExit = auth == null ? 0 : auth.stop();
    if (plain != null) plain.close();
    if (auth != null) auth.close();
    assertEquals("tagqd's exit code on SIGTERM", 0, plainExit);
    assertEquals("tagqd --auth's exit code on SIGTERM", 0, authExit);
  }

  private static String name(String what) {
    return "java-" + what + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  private static void assertState(TagState s, long received, long deleted, long dead, long inFlight, long available) {
    assertEquals("received_total", received, s.getReceivedTotal());
    assertEquals("deleted_total", deleted, s.getDeletedTotal());
    assertEquals("dead_total", dead, s.getDeadTotal());
    assertEquals("in_flight", inFlight, s.getInFlight());
    assertEquals("available", available, s.getAvailable());
  }

  @Test
  public void twoTagsBatchNackUntilDeadAndTheDeadLetter() throws Exception {
    String q = name("orders");
    String dlq = q + "-dlq";
    try (Walkthrough w = new Walkthrough(plain.grpcAddr, null)) {
      assertEquals(List.of("billing", "shipping"), w.createQueue(q, dlq, "billing", "shipping"));
      List<String> ids = w.sendBatch(q, List.of("order 1", "order 2", "poison", "order 4"));
      assertEquals(4, new HashSet<>(ids).size());

      Walkthrough.Worked billing = w.work(q, "billing", m -> true);
      assertEquals(List.of(4, 4, 0), List.of(billing.received, billing.deleted, billing.nacked));
      // shipping refuses the poison message: nacked on its 1st and 2nd
      // receive, dead-lettered by the 3rd (max_receive_count 2).
      Walkthrough.Worked shipping = w.work(q, "shipping", m -> !m.getBody().toStringUtf8().equals("poison"));
      assertEquals(List.of(5, 3, 2), List.of(shipping.received, shipping.deleted, shipping.nacked));
      assertState(w.tagState(q, "billing"), 4, 4, 0, 0, 0);
      assertState(w.tagState(q, "shipping"), 5, 3, 1, 0, 0);

      List<Message> dead = w.takeDeadLetters(dlq);
      assertEquals(1, dead.size());
      Message d = dead.get(0);
      assertEquals("poison", d.getBody().toStringUtf8());
      assertEquals(q, d.getDeadLetter().getSourceQueueName());
      assertEquals("shipping", d.getDeadLetter().getSourceTag());
      assertEquals("MAX_RECEIVE_COUNT_EXCEEDED", d.getDeadLetter().getReason());
      assertEquals(ids.get(2), d.getDeadLetter().getOriginalMessageId());
      assertEquals(2, d.getDeadLetter().getOriginalReceiveCount());
      assertTrue(d.getDeadLetter().hasDeadTimestamp());
      assertEquals("eu", d.getAttributesOrThrow("region").getStringValue());
      assertEquals(q, d.getAttributesOrThrow("DLQ.sourceQueue").getStringValue());
      assertEquals("taken and deleted", List.of(), w.takeDeadLetters(dlq));
    }
  }

  @Test
  public void errorInfoReasonAndField() throws Exception {
    try (Walkthrough w = new Walkthrough(plain.grpcAddr, null)) {
      ErrorInfo e = w.tryCreateQueue("not a name");
      assertNotNull(e);
      assertEquals("INVALID_NAME", e.getReason());
      assertEquals("tagq", e.getDomain());
      assertEquals("queue.name", e.getMetadataOrThrow("field"));
      assertNull("a valid name is created", w.tryCreateQueue(name("ok")));

      String q = name("nf");
      w.createQueue(q, q + "-dlq", "t");
      StatusRuntimeException ex = assertThrows(StatusRuntimeException.class, () -> w.tagState(q, "missing"));
      assertEquals(Status.Code.NOT_FOUND, ex.getStatus().getCode());
      ErrorInfo nf = Walkthrough.errorInfo(ex);
      assertEquals("TAG_NOT_FOUND", nf.getReason());
      assertEquals("name", nf.getMetadataOrThrow("field"));
      assertEquals("missing", nf.getMetadataOrThrow("tag"));
    }
  }

  @Test
  public void consumeStreamReceivesAndAcks() throws Exception {
    String q = name("stream");
    try (Walkthrough w = new Walkthrough(plain.grpcAddr, null)) {
      w.createQueue(q, q + "-dlq", "worker");
      w.sendBatch(q, List.of("a", "b", "c"));
      Walkthrough.Consumed c = w.consume(q, "worker", 3);
      assertEquals(List.of("a", "b", "c"), c.bodies);
      assertEquals(Collections.nCopies(3, "CONSUME_OPERATION_ACK"), c.confirmations);
      assertState(w.tagState(q, "worker"), 3, 3, 0, 0, 0);
    }
  }

  @Test
  public void apiKeyOnTagqdWithAuth() throws Exception {
    String q = name("auth");
    try (Walkthrough anonymous = new Walkthrough(auth.grpcAddr, null);
         Walkthrough wrong = new Walkthrough(auth.grpcAddr, "tagq_nosuchkey_0000");
         Walkthrough admin = new Walkthrough(auth.grpcAddr, ADMIN_KEY)) {
      for (Walkthrough w : List.of(anonymous, wrong)) {
        StatusRuntimeException ex = assertThrows(StatusRuntimeException.class, () -> w.tagState("any", "any"));
        assertEquals(Status.Code.UNAUTHENTICATED, ex.getStatus().getCode());
        assertEquals("UNAUTHENTICATED", Walkthrough.errorInfo(ex).getReason());
      }

      assertEquals(List.of("app"), admin.createQueue(q, q + "-dlq", "app"));
      AccessServiceGrpc.AccessServiceBlockingStub access = AccessServiceGrpc.newBlockingStub(admin.calls);
      access.createPrincipal(CreatePrincipalRequest.newBuilder()
          .setPrincipal(Principal.newBuilder().setName("java-app")).build());
      access.setPermission(SetPermissionRequest.newBuilder().setGrant(PermissionGrant.newBuilder()
          .setPrincipal("java-app").setQueue(q).setPermission(Permission.PERMISSION_SEND_HANDLE)).build());
      String key = access.issueKey(IssueKeyRequest.newBuilder().setPrincipal("java-app").build()).getApiKey();

      try (Walkthrough app = new Walkthrough(auth.grpcAddr, key)) {
        app.sendBatch(q, List.of("x", "y"));
        Walkthrough.Consumed c = app.consume(q, "app", 2); // the stream carries the key too
        assertEquals(List.of("x", "y"), c.bodies);
        assertEquals(Collections.nCopies(2, "CONSUME_OPERATION_ACK"), c.confirmations);
        StatusRuntimeException ex = assertThrows(StatusRuntimeException.class, () -> app.tagState(q, "app"));
        assertEquals(Status.Code.PERMISSION_DENIED, ex.getStatus().getCode());
        ErrorInfo denied = Walkthrough.errorInfo(ex);
        assertEquals("PERMISSION_DENIED", denied.getReason());
        assertEquals("GET_QUEUE_INFO", denied.getMetadataOrThrow("permission"));
      }
      assertState(admin.tagState(q, "app"), 2, 2, 0, 0, 0);
    }
  }

  @Test
  public void theExampleProgramRuns() throws Exception {
    Walkthrough.main(new String[] {plain.grpcAddr});
    Walkthrough.main(new String[] {auth.grpcAddr, ADMIN_KEY});
  }
}
