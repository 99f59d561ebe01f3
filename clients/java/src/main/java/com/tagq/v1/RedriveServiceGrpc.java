package com.tagq.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * RedriveService moves dead letters back from a dead-letter queue to the
 * tags they died in (S10): a moved-back message is delivered only to that
 * tag, with a fresh receive count, its body and attributes, and move_count
 * raised by one.
 * </pre>
 */
@javax.annotation.Generated(
    value = "by gRPC proto compiler",
    comments = "Source: tagq/v1/redrive.proto")
@io.grpc.stub.annotations.GrpcGenerated
public final class RedriveServiceGrpc {

  private RedriveServiceGrpc() {}

  public static final String SERVICE_NAME = "tagq.v1.RedriveService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.StartMessageMoveRequest,
      com.tagq.v1.StartMessageMoveResponse> getStartMessageMoveMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "StartMessageMove",
      requestType = com.tagq.v1.StartMessageMoveRequest.class,
      responseType = com.tagq.v1.StartMessageMoveResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.StartMessageMoveRequest,
      com.tagq.v1.StartMessageMoveResponse> getStartMessageMoveMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.StartMessageMoveRequest, com.tagq.v1.StartMessageMoveResponse> getStartMessageMoveMethod;
    if ((getStartMessageMoveMethod = RedriveServiceGrpc.getStartMessageMoveMethod) == null) {
      synchronized (RedriveServiceGrpc.class) {
        if ((getStartMessageMoveMethod = RedriveServiceGrpc.getStartMessageMoveMethod) == null) {
          RedriveServiceGrpc.getStartMessageMoveMethod = getStartMessageMoveMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.StartMessageMoveRequest, com.tagq.v1.StartMessageMoveResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "StartMessageMove"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.StartMessageMoveRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.StartMessageMoveResponse.getDefaultInstance()))
              .setSchemaDescriptor(new RedriveServiceMethodDescriptorSupplier("StartMessageMove"))
              .build();
        }
      }
    }
    return getStartMessageMoveMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.ListMessageMovesRequest,
      com.tagq.v1.ListMessageMovesResponse> getListMessageMovesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListMessageMoves",
      requestType = com.tagq.v1.ListMessageMovesRequest.class,
      responseType = com.tagq.v1.ListMessageMovesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.ListMessageMovesRequest,
      com.tagq.v1.ListMessageMovesResponse> getListMessageMovesMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.ListMessageMovesRequest, com.tagq.v1.ListMessageMovesResponse> getListMessageMovesMethod;
    if ((getListMessageMovesMethod = RedriveServiceGrpc.getListMessageMovesMethod) == null) {
      synchronized (RedriveServiceGrpc.class) {
        if ((getListMessageMovesMethod = RedriveServiceGrpc.getListMessageMovesMethod) == null) {
          RedriveServiceGrpc.getListMessageMovesMethod = getListMessageMovesMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.ListMessageMovesRequest, com.tagq.v1.ListMessageMovesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListMessageMoves"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ListMessageMovesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ListMessageMovesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new RedriveServiceMethodDescriptorSupplier("ListMessageMoves"))
              .build();
        }
      }
    }
    return getListMessageMovesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.CancelMessageMoveRequest,
      com.tagq.v1.CancelMessageMoveResponse> getCancelMessageMoveMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CancelMessageMove",
      requestType = com.tagq.v1.CancelMessageMoveRequest.class,
      responseType = com.tagq.v1.CancelMessageMoveResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.CancelMessageMoveRequest,
      com.tagq.v1.CancelMessageMoveResponse> getCancelMessageMoveMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.CancelMessageMoveRequest, com.tagq.v1.CancelMessageMoveResponse> getCancelMessageMoveMethod;
    if ((getCancelMessageMoveMethod = RedriveServiceGrpc.getCancelMessageMoveMethod) == null) {
      synchronized (RedriveServiceGrpc.class) {
        if ((getCancelMessageMoveMethod = RedriveServiceGrpc.getCancelMessageMoveMethod) == null) {
          RedriveServiceGrpc.getCancelMessageMoveMethod = getCancelMessageMoveMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.CancelMessageMoveRequest, com.tagq.v1.CancelMessageMoveResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CancelMessageMove"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.CancelMessageMoveRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.CancelMessageMoveResponse.getDefaultInstance()))
              .setSchemaDescriptor(new RedriveServiceMethodDescriptorSupplier("CancelMessageMove"))
              .build();
        }
      }
    }
    return getCancelMessageMoveMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static RedriveServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<RedriveServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<RedriveServiceStub>() {
        @java.lang.Override
        public RedriveServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new RedriveServiceStub(channel, callOptions);
        }
      };
    return RedriveServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static RedriveServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<RedriveServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<RedriveServiceBlockingStub>() {
        @java.lang.Override
        public RedriveServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new RedriveServiceBlockingStub(channel, callOptions);
        }
      };
    return RedriveServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static RedriveServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<RedriveServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<RedriveServiceFutureStub>() {
        @java.lang.Override
        public RedriveServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new RedriveServiceFutureStub(channel, callOptions);
        }
      };
    return RedriveServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * RedriveService moves dead letters back from a dead-letter queue to the
   * tags they died in (S10): a moved-back message is delivered only to that
   * tag, with a fresh receive count, its body and attributes, and move_count
   * raised by one.
   * </pre>
   */
  public static abstract class RedriveServiceImplBase implements io.grpc.BindableService {

    /**
     * <pre>
     * StartMessageMove starts a task that moves the dead letters the queue
     * holds now. Errors: FAILED_PRECONDITION (NOT_A_DEAD_LETTER_QUEUE,
     * MOVE_IN_PROGRESS: one task runs per dead-letter queue).
     * </pre>
     */
    public void startMessageMove(com.tagq.v1.StartMessageMoveRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.StartMessageMoveResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getStartMessageMoveMethod(), responseObserver);
    }

    /**
     * <pre>
     * ListMessageMoves lists a dead-letter queue's recent tasks, newest first.
     * </pre>
     */
    public void listMessageMoves(com.tagq.v1.ListMessageMovesRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.ListMessageMovesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListMessageMovesMethod(), responseObserver);
    }

    /**
     * <pre>
     * CancelMessageMove stops a running task; messages moved stay moved.
     * </pre>
     */
    public void cancelMessageMove(com.tagq.v1.CancelMessageMoveRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.CancelMessageMoveResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCancelMessageMoveMethod(), responseObserver);
    }

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
          .addMethod(
            getStartMessageMoveMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.StartMessageMoveRequest,
                com.tagq.v1.StartMessageMoveResponse>(
                  this, METHODID_START_MESSAGE_MOVE)))
          .addMethod(
            getListMessageMovesMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.ListMessageMovesRequest,
                com.tagq.v1.ListMessageMovesResponse>(
                  this, METHODID_LIST_MESSAGE_MOVES)))
          .addMethod(
            getCancelMessageMoveMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.CancelMessageMoveRequest,
                com.tagq.v1.CancelMessageMoveResponse>(
                  this, METHODID_CANCEL_MESSAGE_MOVE)))
          .build();
    }
  }

  /**
   * <pre>
   * RedriveService moves dead letters back from a dead-letter queue to the
   * tags they died in (S10): a moved-back message is delivered only to that
   * tag, with a fresh receive count, its body and attributes, and move_count
   * raised by one.
   * </pre>
   */
  public static final class RedriveServiceStub extends io.grpc.stub.AbstractAsyncStub<RedriveServiceStub> {
    private RedriveServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected RedriveServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new RedriveServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * StartMessageMove starts a task that moves the dead letters the queue
     * holds now. Errors: FAILED_PRECONDITION (NOT_A_DEAD_LETTER_QUEUE,
     * MOVE_IN_PROGRESS: one task runs per dead-letter queue).
     * </pre>
     */
    public void startMessageMove(com.tagq.v1.StartMessageMoveRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.StartMessageMoveResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getStartMessageMoveMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ListMessageMoves lists a dead-letter queue's recent tasks, newest first.
     * </pre>
     */
    public void listMessageMoves(com.tagq.v1.ListMessageMovesRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.ListMessageMovesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListMessageMovesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * CancelMessageMove stops a running task; messages moved stay moved.
     * </pre>
     */
    public void cancelMessageMove(com.tagq.v1.CancelMessageMoveRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.CancelMessageMoveResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCancelMessageMoveMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * <pre>
   * RedriveService moves dead letters back from a dead-letter queue to the
   * tags they died in (S10): a moved-back message is delivered only to that
   * tag, with a fresh receive count, its body and attributes, and move_count
   * raised by one.
   * </pre>
   */
  public static final class RedriveServiceBlockingStub extends io.grpc.stub.AbstractBlockingStub<RedriveServiceBlockingStub> {
    private RedriveServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected RedriveServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new RedriveServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * StartMessageMove starts a task that moves the dead letters the queue
     * holds now. Errors: FAILED_PRECONDITION (NOT_A_DEAD_LETTER_QUEUE,
     * MOVE_IN_PROGRESS: one task runs per dead-letter queue).
     * </pre>
     */
    public com.tagq.v1.StartMessageMoveResponse startMessageMove(com.tagq.v1.StartMessageMoveRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getStartMessageMoveMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListMessageMoves lists a dead-letter queue's recent tasks, newest first.
     * </pre>
     */
    public com.tagq.v1.ListMessageMovesResponse listMessageMoves(com.tagq.v1.ListMessageMovesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListMessageMovesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * CancelMessageMove stops a running task; messages moved stay moved.
     * </pre>
     */
    public com.tagq.v1.CancelMessageMoveResponse cancelMessageMove(com.tagq.v1.CancelMessageMoveRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCancelMessageMoveMethod(), getCallOptions(), request);
    }
  }

  /**
   * <pre>
   * RedriveService moves dead letters back from a dead-letter queue to the
   * tags they died in (S10): a moved-back message is delivered only to that
   * tag, with a fresh receive count, its body and attributes, and move_count
   * raised by one.
   * </pre>
   */
  public static final class RedriveServiceFutureStub extends io.grpc.stub.AbstractFutureStub<RedriveServiceFutureStub> {
    private RedriveServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected RedriveServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new RedriveServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * StartMessageMove starts a task that moves the dead letters the queue
     * holds now. Errors: FAILED_PRECONDITION (NOT_A_DEAD_LETTER_QUEUE,
     * MOVE_IN_PROGRESS: one task runs per dead-letter queue).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.StartMessageMoveResponse> startMessageMove(
        com.tagq.v1.StartMessageMoveRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getStartMessageMoveMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ListMessageMoves lists a dead-letter queue's recent tasks, newest first.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.ListMessageMovesResponse> listMessageMoves(
        com.tagq.v1.ListMessageMovesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListMessageMovesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * CancelMessageMove stops a running task; messages moved stay moved.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.CancelMessageMoveResponse> cancelMessageMove(
        com.tagq.v1.CancelMessageMoveRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCancelMessageMoveMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_START_MESSAGE_MOVE = 0;
  private static final int METHODID_LIST_MESSAGE_MOVES = 1;
  private static final int METHODID_CANCEL_MESSAGE_MOVE = 2;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final RedriveServiceImplBase serviceImpl;
    private final int methodId;

    MethodHandlers(RedriveServiceImplBase serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_START_MESSAGE_MOVE:
          serviceImpl.startMessageMove((com.tagq.v1.StartMessageMoveRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.StartMessageMoveResponse>) responseObserver);
          break;
        case METHODID_LIST_MESSAGE_MOVES:
          serviceImpl.listMessageMoves((com.tagq.v1.ListMessageMovesRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.ListMessageMovesResponse>) responseObserver);
          break;
        case METHODID_CANCEL_MESSAGE_MOVE:
          serviceImpl.cancelMessageMove((com.tagq.v1.CancelMessageMoveRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.CancelMessageMoveResponse>) responseObserver);
          break;
        default:
          throw new AssertionError();
      }
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public io.grpc.stub.StreamObserver<Req> invoke(
        io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        default:
          throw new AssertionError();
      }
    }
  }

  private static abstract class RedriveServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    RedriveServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return com.tagq.v1.RedriveProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("RedriveService");
    }
  }

  private static final class RedriveServiceFileDescriptorSupplier
      extends RedriveServiceBaseDescriptorSupplier {
    RedriveServiceFileDescriptorSupplier() {}
  }

  private static final class RedriveServiceMethodDescriptorSupplier
      extends RedriveServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final String methodName;

    RedriveServiceMethodDescriptorSupplier(String methodName) {
      this.methodName = methodName;
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.MethodDescriptor getMethodDescriptor() {
      return getServiceDescriptor().findMethodByName(methodName);
    }
  }

  private static volatile io.grpc.ServiceDescriptor serviceDescriptor;

  public static io.grpc.ServiceDescriptor getServiceDescriptor() {
    io.grpc.ServiceDescriptor result = serviceDescriptor;
    if (result == null) {
      synchronized (RedriveServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new RedriveServiceFileDescriptorSupplier())
              .addMethod(getStartMessageMoveMethod())
              .addMethod(getListMessageMovesMethod())
              .addMethod(getCancelMessageMoveMethod())
              .build();
        }
      }
    }
    return result;
  }
}
