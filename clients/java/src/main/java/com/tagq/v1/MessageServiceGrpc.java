package com.tagq.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * MessageService sends, receives and acknowledges messages. Receipt handles
 * name the queue, the tag, the message and the receive generation, so
 * delete, change visibility and dead (and their batches) need only the
 * handle (S3): their queue field is optional and, when given, must be the
 * handle's queue (else INVALID_RECEIPT_HANDLE). Without a queue, a batch
 * acts on the queue its handles name, one queue per batch
 * (INVALID_ARGUMENT, MIXED_QUEUE_BATCH, when they name two). With
 * authentication on they need HANDLE on each handle's queue (and tag),
 * whatever queue the request names. REST: POST /v1/messages:delete and
 * the like, or with the queue in the path.
 * </pre>
 */
@javax.annotation.Generated(
    value = "by gRPC proto compiler",
    comments = "Source: tagq/v1/message.proto")
@io.grpc.stub.annotations.GrpcGenerated
public final class MessageServiceGrpc {

  private MessageServiceGrpc() {}

  public static final String SERVICE_NAME = "tagq.v1.MessageService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.SendMessageRequest,
      com.tagq.v1.SendMessageResponse> getSendMessageMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SendMessage",
      requestType = com.tagq.v1.SendMessageRequest.class,
      responseType = com.tagq.v1.SendMessageResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.SendMessageRequest,
      com.tagq.v1.SendMessageResponse> getSendMessageMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.SendMessageRequest, com.tagq.v1.SendMessageResponse> getSendMessageMethod;
    if ((getSendMessageMethod = MessageServiceGrpc.getSendMessageMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getSendMessageMethod = MessageServiceGrpc.getSendMessageMethod) == null) {
          MessageServiceGrpc.getSendMessageMethod = getSendMessageMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.SendMessageRequest, com.tagq.v1.SendMessageResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SendMessage"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.SendMessageRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.SendMessageResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("SendMessage"))
              .build();
        }
      }
    }
    return getSendMessageMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.SendMessageBatchRequest,
      com.tagq.v1.SendMessageBatchResponse> getSendMessageBatchMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SendMessageBatch",
      requestType = com.tagq.v1.SendMessageBatchRequest.class,
      responseType = com.tagq.v1.SendMessageBatchResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.SendMessageBatchRequest,
      com.tagq.v1.SendMessageBatchResponse> getSendMessageBatchMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.SendMessageBatchRequest, com.tagq.v1.SendMessageBatchResponse> getSendMessageBatchMethod;
    if ((getSendMessageBatchMethod = MessageServiceGrpc.getSendMessageBatchMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getSendMessageBatchMethod = MessageServiceGrpc.getSendMessageBatchMethod) == null) {
          MessageServiceGrpc.getSendMessageBatchMethod = getSendMessageBatchMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.SendMessageBatchRequest, com.tagq.v1.SendMessageBatchResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SendMessageBatch"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.SendMessageBatchRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.SendMessageBatchResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("SendMessageBatch"))
              .build();
        }
      }
    }
    return getSendMessageBatchMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.ReceiveMessageRequest,
      com.tagq.v1.ReceiveMessageResponse> getReceiveMessageMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ReceiveMessage",
      requestType = com.tagq.v1.ReceiveMessageRequest.class,
      responseType = com.tagq.v1.ReceiveMessageResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.ReceiveMessageRequest,
      com.tagq.v1.ReceiveMessageResponse> getReceiveMessageMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.ReceiveMessageRequest, com.tagq.v1.ReceiveMessageResponse> getReceiveMessageMethod;
    if ((getReceiveMessageMethod = MessageServiceGrpc.getReceiveMessageMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getReceiveMessageMethod = MessageServiceGrpc.getReceiveMessageMethod) == null) {
          MessageServiceGrpc.getReceiveMessageMethod = getReceiveMessageMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.ReceiveMessageRequest, com.tagq.v1.ReceiveMessageResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ReceiveMessage"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ReceiveMessageRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ReceiveMessageResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("ReceiveMessage"))
              .build();
        }
      }
    }
    return getReceiveMessageMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.DeleteMessageRequest,
      com.tagq.v1.DeleteMessageResponse> getDeleteMessageMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteMessage",
      requestType = com.tagq.v1.DeleteMessageRequest.class,
      responseType = com.tagq.v1.DeleteMessageResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.DeleteMessageRequest,
      com.tagq.v1.DeleteMessageResponse> getDeleteMessageMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.DeleteMessageRequest, com.tagq.v1.DeleteMessageResponse> getDeleteMessageMethod;
    if ((getDeleteMessageMethod = MessageServiceGrpc.getDeleteMessageMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getDeleteMessageMethod = MessageServiceGrpc.getDeleteMessageMethod) == null) {
          MessageServiceGrpc.getDeleteMessageMethod = getDeleteMessageMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.DeleteMessageRequest, com.tagq.v1.DeleteMessageResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteMessage"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.DeleteMessageRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.DeleteMessageResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("DeleteMessage"))
              .build();
        }
      }
    }
    return getDeleteMessageMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.DeleteMessageBatchRequest,
      com.tagq.v1.DeleteMessageBatchResponse> getDeleteMessageBatchMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteMessageBatch",
      requestType = com.tagq.v1.DeleteMessageBatchRequest.class,
      responseType = com.tagq.v1.DeleteMessageBatchResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.DeleteMessageBatchRequest,
      com.tagq.v1.DeleteMessageBatchResponse> getDeleteMessageBatchMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.DeleteMessageBatchRequest, com.tagq.v1.DeleteMessageBatchResponse> getDeleteMessageBatchMethod;
    if ((getDeleteMessageBatchMethod = MessageServiceGrpc.getDeleteMessageBatchMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getDeleteMessageBatchMethod = MessageServiceGrpc.getDeleteMessageBatchMethod) == null) {
          MessageServiceGrpc.getDeleteMessageBatchMethod = getDeleteMessageBatchMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.DeleteMessageBatchRequest, com.tagq.v1.DeleteMessageBatchResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteMessageBatch"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.DeleteMessageBatchRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.DeleteMessageBatchResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("DeleteMessageBatch"))
              .build();
        }
      }
    }
    return getDeleteMessageBatchMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.ChangeMessageVisibilityRequest,
      com.tagq.v1.ChangeMessageVisibilityResponse> getChangeMessageVisibilityMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ChangeMessageVisibility",
      requestType = com.tagq.v1.ChangeMessageVisibilityRequest.class,
      responseType = com.tagq.v1.ChangeMessageVisibilityResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.ChangeMessageVisibilityRequest,
      com.tagq.v1.ChangeMessageVisibilityResponse> getChangeMessageVisibilityMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.ChangeMessageVisibilityRequest, com.tagq.v1.ChangeMessageVisibilityResponse> getChangeMessageVisibilityMethod;
    if ((getChangeMessageVisibilityMethod = MessageServiceGrpc.getChangeMessageVisibilityMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getChangeMessageVisibilityMethod = MessageServiceGrpc.getChangeMessageVisibilityMethod) == null) {
          MessageServiceGrpc.getChangeMessageVisibilityMethod = getChangeMessageVisibilityMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.ChangeMessageVisibilityRequest, com.tagq.v1.ChangeMessageVisibilityResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ChangeMessageVisibility"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ChangeMessageVisibilityRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ChangeMessageVisibilityResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("ChangeMessageVisibility"))
              .build();
        }
      }
    }
    return getChangeMessageVisibilityMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.ChangeMessageVisibilityBatchRequest,
      com.tagq.v1.ChangeMessageVisibilityBatchResponse> getChangeMessageVisibilityBatchMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ChangeMessageVisibilityBatch",
      requestType = com.tagq.v1.ChangeMessageVisibilityBatchRequest.class,
      responseType = com.tagq.v1.ChangeMessageVisibilityBatchResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.ChangeMessageVisibilityBatchRequest,
      com.tagq.v1.ChangeMessageVisibilityBatchResponse> getChangeMessageVisibilityBatchMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.ChangeMessageVisibilityBatchRequest, com.tagq.v1.ChangeMessageVisibilityBatchResponse> getChangeMessageVisibilityBatchMethod;
    if ((getChangeMessageVisibilityBatchMethod = MessageServiceGrpc.getChangeMessageVisibilityBatchMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getChangeMessageVisibilityBatchMethod = MessageServiceGrpc.getChangeMessageVisibilityBatchMethod) == null) {
          MessageServiceGrpc.getChangeMessageVisibilityBatchMethod = getChangeMessageVisibilityBatchMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.ChangeMessageVisibilityBatchRequest, com.tagq.v1.ChangeMessageVisibilityBatchResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ChangeMessageVisibilityBatch"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ChangeMessageVisibilityBatchRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ChangeMessageVisibilityBatchResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("ChangeMessageVisibilityBatch"))
              .build();
        }
      }
    }
    return getChangeMessageVisibilityBatchMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.PeekMessageRequest,
      com.tagq.v1.PeekMessageResponse> getPeekMessageMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "PeekMessage",
      requestType = com.tagq.v1.PeekMessageRequest.class,
      responseType = com.tagq.v1.PeekMessageResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.PeekMessageRequest,
      com.tagq.v1.PeekMessageResponse> getPeekMessageMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.PeekMessageRequest, com.tagq.v1.PeekMessageResponse> getPeekMessageMethod;
    if ((getPeekMessageMethod = MessageServiceGrpc.getPeekMessageMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getPeekMessageMethod = MessageServiceGrpc.getPeekMessageMethod) == null) {
          MessageServiceGrpc.getPeekMessageMethod = getPeekMessageMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.PeekMessageRequest, com.tagq.v1.PeekMessageResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "PeekMessage"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.PeekMessageRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.PeekMessageResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("PeekMessage"))
              .build();
        }
      }
    }
    return getPeekMessageMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.DeadMessageRequest,
      com.tagq.v1.DeadMessageResponse> getDeadMessageMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeadMessage",
      requestType = com.tagq.v1.DeadMessageRequest.class,
      responseType = com.tagq.v1.DeadMessageResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.DeadMessageRequest,
      com.tagq.v1.DeadMessageResponse> getDeadMessageMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.DeadMessageRequest, com.tagq.v1.DeadMessageResponse> getDeadMessageMethod;
    if ((getDeadMessageMethod = MessageServiceGrpc.getDeadMessageMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getDeadMessageMethod = MessageServiceGrpc.getDeadMessageMethod) == null) {
          MessageServiceGrpc.getDeadMessageMethod = getDeadMessageMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.DeadMessageRequest, com.tagq.v1.DeadMessageResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeadMessage"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.DeadMessageRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.DeadMessageResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("DeadMessage"))
              .build();
        }
      }
    }
    return getDeadMessageMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.DeadMessageBatchRequest,
      com.tagq.v1.DeadMessageBatchResponse> getDeadMessageBatchMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeadMessageBatch",
      requestType = com.tagq.v1.DeadMessageBatchRequest.class,
      responseType = com.tagq.v1.DeadMessageBatchResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.DeadMessageBatchRequest,
      com.tagq.v1.DeadMessageBatchResponse> getDeadMessageBatchMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.DeadMessageBatchRequest, com.tagq.v1.DeadMessageBatchResponse> getDeadMessageBatchMethod;
    if ((getDeadMessageBatchMethod = MessageServiceGrpc.getDeadMessageBatchMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getDeadMessageBatchMethod = MessageServiceGrpc.getDeadMessageBatchMethod) == null) {
          MessageServiceGrpc.getDeadMessageBatchMethod = getDeadMessageBatchMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.DeadMessageBatchRequest, com.tagq.v1.DeadMessageBatchResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeadMessageBatch"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.DeadMessageBatchRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.DeadMessageBatchResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("DeadMessageBatch"))
              .build();
        }
      }
    }
    return getDeadMessageBatchMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.PublishRequest,
      com.tagq.v1.PublishResponse> getPublishMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Publish",
      requestType = com.tagq.v1.PublishRequest.class,
      responseType = com.tagq.v1.PublishResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING)
  public static io.grpc.MethodDescriptor<com.tagq.v1.PublishRequest,
      com.tagq.v1.PublishResponse> getPublishMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.PublishRequest, com.tagq.v1.PublishResponse> getPublishMethod;
    if ((getPublishMethod = MessageServiceGrpc.getPublishMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getPublishMethod = MessageServiceGrpc.getPublishMethod) == null) {
          MessageServiceGrpc.getPublishMethod = getPublishMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.PublishRequest, com.tagq.v1.PublishResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Publish"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.PublishRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.PublishResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("Publish"))
              .build();
        }
      }
    }
    return getPublishMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.ConsumeRequest,
      com.tagq.v1.ConsumeResponse> getConsumeMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Consume",
      requestType = com.tagq.v1.ConsumeRequest.class,
      responseType = com.tagq.v1.ConsumeResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING)
  public static io.grpc.MethodDescriptor<com.tagq.v1.ConsumeRequest,
      com.tagq.v1.ConsumeResponse> getConsumeMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.ConsumeRequest, com.tagq.v1.ConsumeResponse> getConsumeMethod;
    if ((getConsumeMethod = MessageServiceGrpc.getConsumeMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getConsumeMethod = MessageServiceGrpc.getConsumeMethod) == null) {
          MessageServiceGrpc.getConsumeMethod = getConsumeMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.ConsumeRequest, com.tagq.v1.ConsumeResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Consume"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ConsumeRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ConsumeResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("Consume"))
              .build();
        }
      }
    }
    return getConsumeMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static MessageServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MessageServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MessageServiceStub>() {
        @java.lang.Override
        public MessageServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MessageServiceStub(channel, callOptions);
        }
      };
    return MessageServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static MessageServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MessageServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MessageServiceBlockingStub>() {
        @java.lang.Override
        public MessageServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MessageServiceBlockingStub(channel, callOptions);
        }
      };
    return MessageServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static MessageServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MessageServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MessageServiceFutureStub>() {
        @java.lang.Override
        public MessageServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MessageServiceFutureStub(channel, callOptions);
        }
      };
    return MessageServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * MessageService sends, receives and acknowledges messages. Receipt handles
   * name the queue, the tag, the message and the receive generation, so
   * delete, change visibility and dead (and their batches) need only the
   * handle (S3): their queue field is optional and, when given, must be the
   * handle's queue (else INVALID_RECEIPT_HANDLE). Without a queue, a batch
   * acts on the queue its handles name, one queue per batch
   * (INVALID_ARGUMENT, MIXED_QUEUE_BATCH, when they name two). With
   * authentication on they need HANDLE on each handle's queue (and tag),
   * whatever queue the request names. REST: POST /v1/messages:delete and
   * the like, or with the queue in the path.
   * </pre>
   */
  public static abstract class MessageServiceImplBase implements io.grpc.BindableService {

    /**
     * <pre>
     * SendMessage stores one message. Errors: NOT_FOUND (QUEUE_NOT_FOUND),
     * INVALID_ARGUMENT (MESSAGE_TOO_LARGE, INVALID_ATTRIBUTE,
     * RESERVED_ATTRIBUTE, INVALID_ARGUMENT_RANGE), RESOURCE_EXHAUSTED
     * (QUEUE_FULL: the queue is at a cap and refuses new sends; STORAGE_FULL:
     * Redis is near its memory limit; QUOTA_EXCEEDED: the queue's
     * write_quota_per_second is spent this second, see retry_after_ms).
     * </pre>
     */
    public void sendMessage(com.tagq.v1.SendMessageRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.SendMessageResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSendMessageMethod(), responseObserver);
    }

    /**
     * <pre>
     * SendMessageBatch checks every entry, reports the invalid ones and stores
     * the valid ones in one atomic step. On a queue at a cap that refuses new
     * sends, or over its write quota, the entries that fit are stored (in
     * order) and the others fail with QUEUE_FULL or QUOTA_EXCEEDED.
     * STORAGE_FULL fails the whole call, nothing stored.
     * </pre>
     */
    public void sendMessageBatch(com.tagq.v1.SendMessageBatchRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.SendMessageBatchResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSendMessageBatchMethod(), responseObserver);
    }

    /**
     * <pre>
     * ReceiveMessage hands out up to max_messages messages for one tag, waiting
     * up to wait_seconds for the first. Under a read quota it hands out what
     * the quota leaves this second; RESOURCE_EXHAUSTED (QUOTA_EXCEEDED, with
     * retry_after_ms) when that is nothing.
     * </pre>
     */
    public void receiveMessage(com.tagq.v1.ReceiveMessageRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.ReceiveMessageResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getReceiveMessageMethod(), responseObserver);
    }

    /**
     * <pre>
     * DeleteMessage acknowledges a message for the tag that received it.
     * Deleting twice, or with an older handle, is not an error. Errors:
     * INVALID_ARGUMENT (INVALID_RECEIPT_HANDLE: forged, garbled, or not of
     * the queue given).
     * </pre>
     */
    public void deleteMessage(com.tagq.v1.DeleteMessageRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.DeleteMessageResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteMessageMethod(), responseObserver);
    }

    /**
     * <pre>
     * DeleteMessageBatch deletes up to 100 messages of one queue, with a
     * result per entry.
     * </pre>
     */
    public void deleteMessageBatch(com.tagq.v1.DeleteMessageBatchRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.DeleteMessageBatchResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteMessageBatchMethod(), responseObserver);
    }

    /**
     * <pre>
     * ChangeMessageVisibility sets an in-flight message's deadline to now +
     * visibility_seconds; 0 makes it visible at once. Errors:
     * FAILED_PRECONDITION (RECEIPT_HANDLE_STALE) once the message was received
     * again or deleted.
     * </pre>
     */
    public void changeMessageVisibility(com.tagq.v1.ChangeMessageVisibilityRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.ChangeMessageVisibilityResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getChangeMessageVisibilityMethod(), responseObserver);
    }

    /**
     * <pre>
     * ChangeMessageVisibilityBatch changes up to 100 deadlines of one queue's
     * messages, with a result per entry.
     * </pre>
     */
    public void changeMessageVisibilityBatch(com.tagq.v1.ChangeMessageVisibilityBatchRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.ChangeMessageVisibilityBatchResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getChangeMessageVisibilityBatchMethod(), responseObserver);
    }

    /**
     * <pre>
     * PeekMessage reads messages without receiving them: by id, or the next
     * ones available to a tag.
     * </pre>
     */
    public void peekMessage(com.tagq.v1.PeekMessageRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.PeekMessageResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPeekMessageMethod(), responseObserver);
    }

    /**
     * <pre>
     * DeadMessage is a consumer's verdict that a message is poison: an ACK for
     * the tag that received it, which moves it to the queue's dead-letter
     * queue at once with the given reason (S8). Errors: FAILED_PRECONDITION
     * (NOT_A_SOURCE_QUEUE when the queue has no redrive policy;
     * RECEIPT_HANDLE_STALE once the message was received again).
     * </pre>
     */
    public void deadMessage(com.tagq.v1.DeadMessageRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.DeadMessageResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeadMessageMethod(), responseObserver);
    }

    /**
     * <pre>
     * DeadMessageBatch dead-letters up to 100 messages of one queue, with a
     * result per entry.
     * </pre>
     */
    public void deadMessageBatch(com.tagq.v1.DeadMessageBatchRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.DeadMessageBatchResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeadMessageBatchMethod(), responseObserver);
    }

    /**
     * <pre>
     * Publish stores batches sent as frames on one long-lived stream (S17).
     * Each request frame is a SendMessageBatch; its response frame, matched
     * by seq, comes once the frame's messages are stored and holds exactly
     * what SendMessageBatch would have returned. Many frames may be in flight
     * and their answers may come back out of order. A frame that fails as a
     * whole (unknown queue, bad batch, backend unavailable) is answered with
     * its error and nothing of it stored; the stream goes on. gRPC only.
     * </pre>
     */
    public io.grpc.stub.StreamObserver<com.tagq.v1.PublishRequest> publish(
        io.grpc.stub.StreamObserver<com.tagq.v1.PublishResponse> responseObserver) {
      return io.grpc.stub.ServerCalls.asyncUnimplementedStreamingCall(getPublishMethod(), responseObserver);
    }

    /**
     * <pre>
     * Consume pushes a tag's messages as credit allows and takes their acks,
     * nacks, extensions and dead-letterings back on the same stream (S15,
     * S16). The first request opens the stream (open); later requests carry
     * any mix of settlements and flow changes. Never more than the
     * outstanding limits are pushed and not yet settled. When the stream
     * ends, its unsettled messages become visible again: at once when the
     * client closes its side or the server shuts down, at their deadlines
     * when the stream breaks. While the tag's read quota is spent the stream
     * pushes nothing until the next second (no error). A server's open
     * Publish and Consume streams are bounded (tagqd --max-streams): beyond
     * that a new one ends at once with RESOURCE_EXHAUSTED (TOO_MANY_STREAMS).
     * gRPC only.
     * </pre>
     */
    public io.grpc.stub.StreamObserver<com.tagq.v1.ConsumeRequest> consume(
        io.grpc.stub.StreamObserver<com.tagq.v1.ConsumeResponse> responseObserver) {
      return io.grpc.stub.ServerCalls.asyncUnimplementedStreamingCall(getConsumeMethod(), responseObserver);
    }

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
          .addMethod(
            getSendMessageMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.SendMessageRequest,
                com.tagq.v1.SendMessageResponse>(
                  this, METHODID_SEND_MESSAGE)))
          .addMethod(
            getSendMessageBatchMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.SendMessageBatchRequest,
                com.tagq.v1.SendMessageBatchResponse>(
                  this, METHODID_SEND_MESSAGE_BATCH)))
          .addMethod(
            getReceiveMessageMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.ReceiveMessageRequest,
                com.tagq.v1.ReceiveMessageResponse>(
                  this, METHODID_RECEIVE_MESSAGE)))
          .addMethod(
            getDeleteMessageMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.DeleteMessageRequest,
                com.tagq.v1.DeleteMessageResponse>(
                  this, METHODID_DELETE_MESSAGE)))
          .addMethod(
            getDeleteMessageBatchMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.DeleteMessageBatchRequest,
                com.tagq.v1.DeleteMessageBatchResponse>(
                  this, METHODID_DELETE_MESSAGE_BATCH)))
          .addMethod(
            getChangeMessageVisibilityMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.ChangeMessageVisibilityRequest,
                com.tagq.v1.ChangeMessageVisibilityResponse>(
                  this, METHODID_CHANGE_MESSAGE_VISIBILITY)))
          .addMethod(
            getChangeMessageVisibilityBatchMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.ChangeMessageVisibilityBatchRequest,
                com.tagq.v1.ChangeMessageVisibilityBatchResponse>(
                  this, METHODID_CHANGE_MESSAGE_VISIBILITY_BATCH)))
          .addMethod(
            getPeekMessageMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.PeekMessageRequest,
                com.tagq.v1.PeekMessageResponse>(
                  this, METHODID_PEEK_MESSAGE)))
          .addMethod(
            getDeadMessageMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.DeadMessageRequest,
                com.tagq.v1.DeadMessageResponse>(
                  this, METHODID_DEAD_MESSAGE)))
          .addMethod(
            getDeadMessageBatchMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.DeadMessageBatchRequest,
                com.tagq.v1.DeadMessageBatchResponse>(
                  this, METHODID_DEAD_MESSAGE_BATCH)))
          .addMethod(
            getPublishMethod(),
            io.grpc.stub.ServerCalls.asyncBidiStreamingCall(
              new MethodHandlers<
                com.tagq.v1.PublishRequest,
                com.tagq.v1.PublishResponse>(
                  this, METHODID_PUBLISH)))
          .addMethod(
            getConsumeMethod(),
            io.grpc.stub.ServerCalls.asyncBidiStreamingCall(
              new MethodHandlers<
                com.tagq.v1.ConsumeRequest,
                com.tagq.v1.ConsumeResponse>(
                  this, METHODID_CONSUME)))
          .build();
    }
  }

  /**
   * <pre>
   * MessageService sends, receives and acknowledges messages. Receipt handles
   * name the queue, the tag, the message and the receive generation, so
   * delete, change visibility and dead (and their batches) need only the
   * handle (S3): their queue field is optional and, when given, must be the
   * handle's queue (else INVALID_RECEIPT_HANDLE). Without a queue, a batch
   * acts on the queue its handles name, one queue per batch
   * (INVALID_ARGUMENT, MIXED_QUEUE_BATCH, when they name two). With
   * authentication on they need HANDLE on each handle's queue (and tag),
   * whatever queue the request names. REST: POST /v1/messages:delete and
   * the like, or with the queue in the path.
   * </pre>
   */
  public static final class MessageServiceStub extends io.grpc.stub.AbstractAsyncStub<MessageServiceStub> {
    private MessageServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MessageServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MessageServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * SendMessage stores one message. Errors: NOT_FOUND (QUEUE_NOT_FOUND),
     * INVALID_ARGUMENT (MESSAGE_TOO_LARGE, INVALID_ATTRIBUTE,
     * RESERVED_ATTRIBUTE, INVALID_ARGUMENT_RANGE), RESOURCE_EXHAUSTED
     * (QUEUE_FULL: the queue is at a cap and refuses new sends; STORAGE_FULL:
     * Redis is near its memory limit; QUOTA_EXCEEDED: the queue's
     * write_quota_per_second is spent this second, see retry_after_ms).
     * </pre>
     */
    public void sendMessage(com.tagq.v1.SendMessageRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.SendMessageResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSendMessageMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * SendMessageBatch checks every entry, reports the invalid ones and stores
     * the valid ones in one atomic step. On a queue at a cap that refuses new
     * sends, or over its write quota, the entries that fit are stored (in
     * order) and the others fail with QUEUE_FULL or QUOTA_EXCEEDED.
     * STORAGE_FULL fails the whole call, nothing stored.
     * </pre>
     */
    public void sendMessageBatch(com.tagq.v1.SendMessageBatchRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.SendMessageBatchResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSendMessageBatchMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ReceiveMessage hands out up to max_messages messages for one tag, waiting
     * up to wait_seconds for the first. Under a read quota it hands out what
     * the quota leaves this second; RESOURCE_EXHAUSTED (QUOTA_EXCEEDED, with
     * retry_after_ms) when that is nothing.
     * </pre>
     */
    public void receiveMessage(com.tagq.v1.ReceiveMessageRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.ReceiveMessageResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getReceiveMessageMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * DeleteMessage acknowledges a message for the tag that received it.
     * Deleting twice, or with an older handle, is not an error. Errors:
     * INVALID_ARGUMENT (INVALID_RECEIPT_HANDLE: forged, garbled, or not of
     * the queue given).
     * </pre>
     */
    public void deleteMessage(com.tagq.v1.DeleteMessageRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.DeleteMessageResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteMessageMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * DeleteMessageBatch deletes up to 100 messages of one queue, with a
     * result per entry.
     * </pre>
     */
    public void deleteMessageBatch(com.tagq.v1.DeleteMessageBatchRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.DeleteMessageBatchResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteMessageBatchMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ChangeMessageVisibility sets an in-flight message's deadline to now +
     * visibility_seconds; 0 makes it visible at once. Errors:
     * FAILED_PRECONDITION (RECEIPT_HANDLE_STALE) once the message was received
     * again or deleted.
     * </pre>
     */
    public void changeMessageVisibility(com.tagq.v1.ChangeMessageVisibilityRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.ChangeMessageVisibilityResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getChangeMessageVisibilityMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ChangeMessageVisibilityBatch changes up to 100 deadlines of one queue's
     * messages, with a result per entry.
     * </pre>
     */
    public void changeMessageVisibilityBatch(com.tagq.v1.ChangeMessageVisibilityBatchRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.ChangeMessageVisibilityBatchResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getChangeMessageVisibilityBatchMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * PeekMessage reads messages without receiving them: by id, or the next
     * ones available to a tag.
     * </pre>
     */
    public void peekMessage(com.tagq.v1.PeekMessageRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.PeekMessageResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPeekMessageMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * DeadMessage is a consumer's verdict that a message is poison: an ACK for
     * the tag that received it, which moves it to the queue's dead-letter
     * queue at once with the given reason (S8). Errors: FAILED_PRECONDITION
     * (NOT_A_SOURCE_QUEUE when the queue has no redrive policy;
     * RECEIPT_HANDLE_STALE once the message was received again).
     * </pre>
     */
    public void deadMessage(com.tagq.v1.DeadMessageRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.DeadMessageResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeadMessageMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * DeadMessageBatch dead-letters up to 100 messages of one queue, with a
     * result per entry.
     * </pre>
     */
    public void deadMessageBatch(com.tagq.v1.DeadMessageBatchRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.DeadMessageBatchResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeadMessageBatchMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Publish stores batches sent as frames on one long-lived stream (S17).
     * Each request frame is a SendMessageBatch; its response frame, matched
     * by seq, comes once the frame's messages are stored and holds exactly
     * what SendMessageBatch would have returned. Many frames may be in flight
     * and their answers may come back out of order. A frame that fails as a
     * whole (unknown queue, bad batch, backend unavailable) is answered with
     * its error and nothing of it stored; the stream goes on. gRPC only.
     * </pre>
     */
    public io.grpc.stub.StreamObserver<com.tagq.v1.PublishRequest> publish(
        io.grpc.stub.StreamObserver<com.tagq.v1.PublishResponse> responseObserver) {
      return io.grpc.stub.ClientCalls.asyncBidiStreamingCall(
          getChannel().newCall(getPublishMethod(), getCallOptions()), responseObserver);
    }

    /**
     * <pre>
     * Consume pushes a tag's messages as credit allows and takes their acks,
     * nacks, extensions and dead-letterings back on the same stream (S15,
     * S16). The first request opens the stream (open); later requests carry
     * any mix of settlements and flow changes. Never more than the
     * outstanding limits are pushed and not yet settled. When the stream
     * ends, its unsettled messages become visible again: at once when the
     * client closes its side or the server shuts down, at their deadlines
     * when the stream breaks. While the tag's read quota is spent the stream
     * pushes nothing until the next second (no error). A server's open
     * Publish and Consume streams are bounded (tagqd --max-streams): beyond
     * that a new one ends at once with RESOURCE_EXHAUSTED (TOO_MANY_STREAMS).
     * gRPC only.
     * </pre>
     */
    public io.grpc.stub.StreamObserver<com.tagq.v1.ConsumeRequest> consume(
        io.grpc.stub.StreamObserver<com.tagq.v1.ConsumeResponse> responseObserver) {
      return io.grpc.stub.ClientCalls.asyncBidiStreamingCall(
          getChannel().newCall(getConsumeMethod(), getCallOptions()), responseObserver);
    }
  }

  /**
   * <pre>
   * MessageService sends, receives and acknowledges messages. Receipt handles
   * name the queue, the tag, the message and the receive generation, so
   * delete, change visibility and dead (and their batches) need only the
   * handle (S3): their queue field is optional and, when given, must be the
   * handle's queue (else INVALID_RECEIPT_HANDLE). Without a queue, a batch
   * acts on the queue its handles name, one queue per batch
   * (INVALID_ARGUMENT, MIXED_QUEUE_BATCH, when they name two). With
   * authentication on they need HANDLE on each handle's queue (and tag),
   * whatever queue the request names. REST: POST /v1/messages:delete and
   * the like, or with the queue in the path.
   * </pre>
   */
  public static final class MessageServiceBlockingStub extends io.grpc.stub.AbstractBlockingStub<MessageServiceBlockingStub> {
    private MessageServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MessageServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MessageServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * SendMessage stores one message. Errors: NOT_FOUND (QUEUE_NOT_FOUND),
     * INVALID_ARGUMENT (MESSAGE_TOO_LARGE, INVALID_ATTRIBUTE,
     * RESERVED_ATTRIBUTE, INVALID_ARGUMENT_RANGE), RESOURCE_EXHAUSTED
     * (QUEUE_FULL: the queue is at a cap and refuses new sends; STORAGE_FULL:
     * Redis is near its memory limit; QUOTA_EXCEEDED: the queue's
     * write_quota_per_second is spent this second, see retry_after_ms).
     * </pre>
     */
    public com.tagq.v1.SendMessageResponse sendMessage(com.tagq.v1.SendMessageRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSendMessageMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * SendMessageBatch checks every entry, reports the invalid ones and stores
     * the valid ones in one atomic step. On a queue at a cap that refuses new
     * sends, or over its write quota, the entries that fit are stored (in
     * order) and the others fail with QUEUE_FULL or QUOTA_EXCEEDED.
     * STORAGE_FULL fails the whole call, nothing stored.
     * </pre>
     */
    public com.tagq.v1.SendMessageBatchResponse sendMessageBatch(com.tagq.v1.SendMessageBatchRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSendMessageBatchMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ReceiveMessage hands out up to max_messages messages for one tag, waiting
     * up to wait_seconds for the first. Under a read quota it hands out what
     * the quota leaves this second; RESOURCE_EXHAUSTED (QUOTA_EXCEEDED, with
     * retry_after_ms) when that is nothing.
     * </pre>
     */
    public com.tagq.v1.ReceiveMessageResponse receiveMessage(com.tagq.v1.ReceiveMessageRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getReceiveMessageMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * DeleteMessage acknowledges a message for the tag that received it.
     * Deleting twice, or with an older handle, is not an error. Errors:
     * INVALID_ARGUMENT (INVALID_RECEIPT_HANDLE: forged, garbled, or not of
     * the queue given).
     * </pre>
     */
    public com.tagq.v1.DeleteMessageResponse deleteMessage(com.tagq.v1.DeleteMessageRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteMessageMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * DeleteMessageBatch deletes up to 100 messages of one queue, with a
     * result per entry.
     * </pre>
     */
    public com.tagq.v1.DeleteMessageBatchResponse deleteMessageBatch(com.tagq.v1.DeleteMessageBatchRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteMessageBatchMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ChangeMessageVisibility sets an in-flight message's deadline to now +
     * visibility_seconds; 0 makes it visible at once. Errors:
     * FAILED_PRECONDITION (RECEIPT_HANDLE_STALE) once the message was received
     * again or deleted.
     * </pre>
     */
    public com.tagq.v1.ChangeMessageVisibilityResponse changeMessageVisibility(com.tagq.v1.ChangeMessageVisibilityRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getChangeMessageVisibilityMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ChangeMessageVisibilityBatch changes up to 100 deadlines of one queue's
     * messages, with a result per entry.
     * </pre>
     */
    public com.tagq.v1.ChangeMessageVisibilityBatchResponse changeMessageVisibilityBatch(com.tagq.v1.ChangeMessageVisibilityBatchRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getChangeMessageVisibilityBatchMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * PeekMessage reads messages without receiving them: by id, or the next
     * ones available to a tag.
     * </pre>
     */
    public com.tagq.v1.PeekMessageResponse peekMessage(com.tagq.v1.PeekMessageRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPeekMessageMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * DeadMessage is a consumer's verdict that a message is poison: an ACK for
     * the tag that received it, which moves it to the queue's dead-letter
     * queue at once with the given reason (S8). Errors: FAILED_PRECONDITION
     * (NOT_A_SOURCE_QUEUE when the queue has no redrive policy;
     * RECEIPT_HANDLE_STALE once the message was received again).
     * </pre>
     */
    public com.tagq.v1.DeadMessageResponse deadMessage(com.tagq.v1.DeadMessageRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeadMessageMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * DeadMessageBatch dead-letters up to 100 messages of one queue, with a
     * result per entry.
     * </pre>
     */
    public com.tagq.v1.DeadMessageBatchResponse deadMessageBatch(com.tagq.v1.DeadMessageBatchRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeadMessageBatchMethod(), getCallOptions(), request);
    }
  }

  /**
   * <pre>
   * MessageService sends, receives and acknowledges messages. Receipt handles
   * name the queue, the tag, the message and the receive generation, so
   * delete, change visibility and dead (and their batches) need only the
   * handle (S3): their queue field is optional and, when given, must be the
   * handle's queue (else INVALID_RECEIPT_HANDLE). Without a queue, a batch
   * acts on the queue its handles name, one queue per batch
   * (INVALID_ARGUMENT, MIXED_QUEUE_BATCH, when they name two). With
   * authentication on they need HANDLE on each handle's queue (and tag),
   * whatever queue the request names. REST: POST /v1/messages:delete and
   * the like, or with the queue in the path.
   * </pre>
   */
  public static final class MessageServiceFutureStub extends io.grpc.stub.AbstractFutureStub<MessageServiceFutureStub> {
    private MessageServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MessageServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MessageServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * SendMessage stores one message. Errors: NOT_FOUND (QUEUE_NOT_FOUND),
     * INVALID_ARGUMENT (MESSAGE_TOO_LARGE, INVALID_ATTRIBUTE,
     * RESERVED_ATTRIBUTE, INVALID_ARGUMENT_RANGE), RESOURCE_EXHAUSTED
     * (QUEUE_FULL: the queue is at a cap and refuses new sends; STORAGE_FULL:
     * Redis is near its memory limit; QUOTA_EXCEEDED: the queue's
     * write_quota_per_second is spent this second, see retry_after_ms).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.SendMessageResponse> sendMessage(
        com.tagq.v1.SendMessageRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSendMessageMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * SendMessageBatch checks every entry, reports the invalid ones and stores
     * the valid ones in one atomic step. On a queue at a cap that refuses new
     * sends, or over its write quota, the entries that fit are stored (in
     * order) and the others fail with QUEUE_FULL or QUOTA_EXCEEDED.
     * STORAGE_FULL fails the whole call, nothing stored.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.SendMessageBatchResponse> sendMessageBatch(
        com.tagq.v1.SendMessageBatchRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSendMessageBatchMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ReceiveMessage hands out up to max_messages messages for one tag, waiting
     * up to wait_seconds for the first. Under a read quota it hands out what
     * the quota leaves this second; RESOURCE_EXHAUSTED (QUOTA_EXCEEDED, with
     * retry_after_ms) when that is nothing.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.ReceiveMessageResponse> receiveMessage(
        com.tagq.v1.ReceiveMessageRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getReceiveMessageMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * DeleteMessage acknowledges a message for the tag that received it.
     * Deleting twice, or with an older handle, is not an error. Errors:
     * INVALID_ARGUMENT (INVALID_RECEIPT_HANDLE: forged, garbled, or not of
     * the queue given).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.DeleteMessageResponse> deleteMessage(
        com.tagq.v1.DeleteMessageRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteMessageMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * DeleteMessageBatch deletes up to 100 messages of one queue, with a
     * result per entry.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.DeleteMessageBatchResponse> deleteMessageBatch(
        com.tagq.v1.DeleteMessageBatchRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteMessageBatchMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ChangeMessageVisibility sets an in-flight message's deadline to now +
     * visibility_seconds; 0 makes it visible at once. Errors:
     * FAILED_PRECONDITION (RECEIPT_HANDLE_STALE) once the message was received
     * again or deleted.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.ChangeMessageVisibilityResponse> changeMessageVisibility(
        com.tagq.v1.ChangeMessageVisibilityRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getChangeMessageVisibilityMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ChangeMessageVisibilityBatch changes up to 100 deadlines of one queue's
     * messages, with a result per entry.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.ChangeMessageVisibilityBatchResponse> changeMessageVisibilityBatch(
        com.tagq.v1.ChangeMessageVisibilityBatchRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getChangeMessageVisibilityBatchMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * PeekMessage reads messages without receiving them: by id, or the next
     * ones available to a tag.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.PeekMessageResponse> peekMessage(
        com.tagq.v1.PeekMessageRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPeekMessageMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * DeadMessage is a consumer's verdict that a message is poison: an ACK for
     * the tag that received it, which moves it to the queue's dead-letter
     * queue at once with the given reason (S8). Errors: FAILED_PRECONDITION
     * (NOT_A_SOURCE_QUEUE when the queue has no redrive policy;
     * RECEIPT_HANDLE_STALE once the message was received again).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.DeadMessageResponse> deadMessage(
        com.tagq.v1.DeadMessageRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeadMessageMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * DeadMessageBatch dead-letters up to 100 messages of one queue, with a
     * result per entry.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.DeadMessageBatchResponse> deadMessageBatch(
        com.tagq.v1.DeadMessageBatchRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeadMessageBatchMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_SEND_MESSAGE = 0;
  private static final int METHODID_SEND_MESSAGE_BATCH = 1;
  private static final int METHODID_RECEIVE_MESSAGE = 2;
  private static final int METHODID_DELETE_MESSAGE = 3;
  private static final int METHODID_DELETE_MESSAGE_BATCH = 4;
  private static final int METHODID_CHANGE_MESSAGE_VISIBILITY = 5;
  private static final int METHODID_CHANGE_MESSAGE_VISIBILITY_BATCH = 6;
  private static final int METHODID_PEEK_MESSAGE = 7;
  private static final int METHODID_DEAD_MESSAGE = 8;
  private static final int METHODID_DEAD_MESSAGE_BATCH = 9;
  private static final int METHODID_PUBLISH = 10;
  private static final int METHODID_CONSUME = 11;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final MessageServiceImplBase serviceImpl;
    private final int methodId;

    MethodHandlers(MessageServiceImplBase serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_SEND_MESSAGE:
          serviceImpl.sendMessage((com.tagq.v1.SendMessageRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.SendMessageResponse>) responseObserver);
          break;
        case METHODID_SEND_MESSAGE_BATCH:
          serviceImpl.sendMessageBatch((com.tagq.v1.SendMessageBatchRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.SendMessageBatchResponse>) responseObserver);
          break;
        case METHODID_RECEIVE_MESSAGE:
          serviceImpl.receiveMessage((com.tagq.v1.ReceiveMessageRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.ReceiveMessageResponse>) responseObserver);
          break;
        case METHODID_DELETE_MESSAGE:
          serviceImpl.deleteMessage((com.tagq.v1.DeleteMessageRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.DeleteMessageResponse>) responseObserver);
          break;
        case METHODID_DELETE_MESSAGE_BATCH:
          serviceImpl.deleteMessageBatch((com.tagq.v1.DeleteMessageBatchRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.DeleteMessageBatchResponse>) responseObserver);
          break;
        case METHODID_CHANGE_MESSAGE_VISIBILITY:
          serviceImpl.changeMessageVisibility((com.tagq.v1.ChangeMessageVisibilityRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.ChangeMessageVisibilityResponse>) responseObserver);
          break;
        case METHODID_CHANGE_MESSAGE_VISIBILITY_BATCH:
          serviceImpl.changeMessageVisibilityBatch((com.tagq.v1.ChangeMessageVisibilityBatchRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.ChangeMessageVisibilityBatchResponse>) responseObserver);
          break;
        case METHODID_PEEK_MESSAGE:
          serviceImpl.peekMessage((com.tagq.v1.PeekMessageRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.PeekMessageResponse>) responseObserver);
          break;
        case METHODID_DEAD_MESSAGE:
          serviceImpl.deadMessage((com.tagq.v1.DeadMessageRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.DeadMessageResponse>) responseObserver);
          break;
        case METHODID_DEAD_MESSAGE_BATCH:
          serviceImpl.deadMessageBatch((com.tagq.v1.DeadMessageBatchRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.DeadMessageBatchResponse>) responseObserver);
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
        case METHODID_PUBLISH:
          return (io.grpc.stub.StreamObserver<Req>) serviceImpl.publish(
              (io.grpc.stub.StreamObserver<com.tagq.v1.PublishResponse>) responseObserver);
        case METHODID_CONSUME:
          return (io.grpc.stub.StreamObserver<Req>) serviceImpl.consume(
              (io.grpc.stub.StreamObserver<com.tagq.v1.ConsumeResponse>) responseObserver);
        default:
          throw new AssertionError();
      }
    }
  }

  private static abstract class MessageServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    MessageServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return com.tagq.v1.MessageProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("MessageService");
    }
  }

  private static final class MessageServiceFileDescriptorSupplier
      extends MessageServiceBaseDescriptorSupplier {
    MessageServiceFileDescriptorSupplier() {}
  }

  private static final class MessageServiceMethodDescriptorSupplier
      extends MessageServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final String methodName;

    MessageServiceMethodDescriptorSupplier(String methodName) {
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
      synchronized (MessageServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new MessageServiceFileDescriptorSupplier())
              .addMethod(getSendMessageMethod())
              .addMethod(getSendMessageBatchMethod())
              .addMethod(getReceiveMessageMethod())
              .addMethod(getDeleteMessageMethod())
              .addMethod(getDeleteMessageBatchMethod())
              .addMethod(getChangeMessageVisibilityMethod())
              .addMethod(getChangeMessageVisibilityBatchMethod())
              .addMethod(getPeekMessageMethod())
              .addMethod(getDeadMessageMethod())
              .addMethod(getDeadMessageBatchMethod())
              .addMethod(getPublishMethod())
              .addMethod(getConsumeMethod())
              .build();
        }
      }
    }
    return result;
  }
}
