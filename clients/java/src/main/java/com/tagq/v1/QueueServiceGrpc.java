package com.tagq.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * QueueService manages queues and their tags (independent readers).
 * Every error carries a google.rpc.ErrorInfo with domain "tagq" and a reason
 * such as QUEUE_NOT_FOUND, INVALID_NAME or INVALID_ARGUMENT_RANGE; the
 * metadata key "field" names the offending request field.
 * </pre>
 */
@javax.annotation.Generated(
    value = "by gRPC proto compiler",
    comments = "Source: tagq/v1/queue.proto")
@io.grpc.stub.annotations.GrpcGenerated
public final class QueueServiceGrpc {

  private QueueServiceGrpc() {}

  public static final String SERVICE_NAME = "tagq.v1.QueueService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.CreateQueueRequest,
      com.tagq.v1.CreateQueueResponse> getCreateQueueMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CreateQueue",
      requestType = com.tagq.v1.CreateQueueRequest.class,
      responseType = com.tagq.v1.CreateQueueResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.CreateQueueRequest,
      com.tagq.v1.CreateQueueResponse> getCreateQueueMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.CreateQueueRequest, com.tagq.v1.CreateQueueResponse> getCreateQueueMethod;
    if ((getCreateQueueMethod = QueueServiceGrpc.getCreateQueueMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getCreateQueueMethod = QueueServiceGrpc.getCreateQueueMethod) == null) {
          QueueServiceGrpc.getCreateQueueMethod = getCreateQueueMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.CreateQueueRequest, com.tagq.v1.CreateQueueResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CreateQueue"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.CreateQueueRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.CreateQueueResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("CreateQueue"))
              .build();
        }
      }
    }
    return getCreateQueueMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.GetQueueRequest,
      com.tagq.v1.GetQueueResponse> getGetQueueMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetQueue",
      requestType = com.tagq.v1.GetQueueRequest.class,
      responseType = com.tagq.v1.GetQueueResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.GetQueueRequest,
      com.tagq.v1.GetQueueResponse> getGetQueueMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.GetQueueRequest, com.tagq.v1.GetQueueResponse> getGetQueueMethod;
    if ((getGetQueueMethod = QueueServiceGrpc.getGetQueueMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getGetQueueMethod = QueueServiceGrpc.getGetQueueMethod) == null) {
          QueueServiceGrpc.getGetQueueMethod = getGetQueueMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.GetQueueRequest, com.tagq.v1.GetQueueResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetQueue"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.GetQueueRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.GetQueueResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("GetQueue"))
              .build();
        }
      }
    }
    return getGetQueueMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.ListQueuesRequest,
      com.tagq.v1.ListQueuesResponse> getListQueuesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListQueues",
      requestType = com.tagq.v1.ListQueuesRequest.class,
      responseType = com.tagq.v1.ListQueuesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.ListQueuesRequest,
      com.tagq.v1.ListQueuesResponse> getListQueuesMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.ListQueuesRequest, com.tagq.v1.ListQueuesResponse> getListQueuesMethod;
    if ((getListQueuesMethod = QueueServiceGrpc.getListQueuesMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getListQueuesMethod = QueueServiceGrpc.getListQueuesMethod) == null) {
          QueueServiceGrpc.getListQueuesMethod = getListQueuesMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.ListQueuesRequest, com.tagq.v1.ListQueuesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListQueues"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ListQueuesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ListQueuesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("ListQueues"))
              .build();
        }
      }
    }
    return getListQueuesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.UpdateQueueRequest,
      com.tagq.v1.UpdateQueueResponse> getUpdateQueueMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "UpdateQueue",
      requestType = com.tagq.v1.UpdateQueueRequest.class,
      responseType = com.tagq.v1.UpdateQueueResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.UpdateQueueRequest,
      com.tagq.v1.UpdateQueueResponse> getUpdateQueueMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.UpdateQueueRequest, com.tagq.v1.UpdateQueueResponse> getUpdateQueueMethod;
    if ((getUpdateQueueMethod = QueueServiceGrpc.getUpdateQueueMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getUpdateQueueMethod = QueueServiceGrpc.getUpdateQueueMethod) == null) {
          QueueServiceGrpc.getUpdateQueueMethod = getUpdateQueueMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.UpdateQueueRequest, com.tagq.v1.UpdateQueueResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "UpdateQueue"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.UpdateQueueRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.UpdateQueueResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("UpdateQueue"))
              .build();
        }
      }
    }
    return getUpdateQueueMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.DeleteQueueRequest,
      com.tagq.v1.DeleteQueueResponse> getDeleteQueueMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteQueue",
      requestType = com.tagq.v1.DeleteQueueRequest.class,
      responseType = com.tagq.v1.DeleteQueueResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.DeleteQueueRequest,
      com.tagq.v1.DeleteQueueResponse> getDeleteQueueMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.DeleteQueueRequest, com.tagq.v1.DeleteQueueResponse> getDeleteQueueMethod;
    if ((getDeleteQueueMethod = QueueServiceGrpc.getDeleteQueueMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getDeleteQueueMethod = QueueServiceGrpc.getDeleteQueueMethod) == null) {
          QueueServiceGrpc.getDeleteQueueMethod = getDeleteQueueMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.DeleteQueueRequest, com.tagq.v1.DeleteQueueResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteQueue"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.DeleteQueueRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.DeleteQueueResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("DeleteQueue"))
              .build();
        }
      }
    }
    return getDeleteQueueMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.PurgeQueueRequest,
      com.tagq.v1.PurgeQueueResponse> getPurgeQueueMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "PurgeQueue",
      requestType = com.tagq.v1.PurgeQueueRequest.class,
      responseType = com.tagq.v1.PurgeQueueResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.PurgeQueueRequest,
      com.tagq.v1.PurgeQueueResponse> getPurgeQueueMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.PurgeQueueRequest, com.tagq.v1.PurgeQueueResponse> getPurgeQueueMethod;
    if ((getPurgeQueueMethod = QueueServiceGrpc.getPurgeQueueMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getPurgeQueueMethod = QueueServiceGrpc.getPurgeQueueMethod) == null) {
          QueueServiceGrpc.getPurgeQueueMethod = getPurgeQueueMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.PurgeQueueRequest, com.tagq.v1.PurgeQueueResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "PurgeQueue"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.PurgeQueueRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.PurgeQueueResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("PurgeQueue"))
              .build();
        }
      }
    }
    return getPurgeQueueMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.CreateTagRequest,
      com.tagq.v1.CreateTagResponse> getCreateTagMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CreateTag",
      requestType = com.tagq.v1.CreateTagRequest.class,
      responseType = com.tagq.v1.CreateTagResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.CreateTagRequest,
      com.tagq.v1.CreateTagResponse> getCreateTagMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.CreateTagRequest, com.tagq.v1.CreateTagResponse> getCreateTagMethod;
    if ((getCreateTagMethod = QueueServiceGrpc.getCreateTagMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getCreateTagMethod = QueueServiceGrpc.getCreateTagMethod) == null) {
          QueueServiceGrpc.getCreateTagMethod = getCreateTagMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.CreateTagRequest, com.tagq.v1.CreateTagResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CreateTag"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.CreateTagRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.CreateTagResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("CreateTag"))
              .build();
        }
      }
    }
    return getCreateTagMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.GetTagRequest,
      com.tagq.v1.GetTagResponse> getGetTagMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetTag",
      requestType = com.tagq.v1.GetTagRequest.class,
      responseType = com.tagq.v1.GetTagResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.GetTagRequest,
      com.tagq.v1.GetTagResponse> getGetTagMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.GetTagRequest, com.tagq.v1.GetTagResponse> getGetTagMethod;
    if ((getGetTagMethod = QueueServiceGrpc.getGetTagMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getGetTagMethod = QueueServiceGrpc.getGetTagMethod) == null) {
          QueueServiceGrpc.getGetTagMethod = getGetTagMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.GetTagRequest, com.tagq.v1.GetTagResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetTag"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.GetTagRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.GetTagResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("GetTag"))
              .build();
        }
      }
    }
    return getGetTagMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.ListTagsRequest,
      com.tagq.v1.ListTagsResponse> getListTagsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListTags",
      requestType = com.tagq.v1.ListTagsRequest.class,
      responseType = com.tagq.v1.ListTagsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.ListTagsRequest,
      com.tagq.v1.ListTagsResponse> getListTagsMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.ListTagsRequest, com.tagq.v1.ListTagsResponse> getListTagsMethod;
    if ((getListTagsMethod = QueueServiceGrpc.getListTagsMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getListTagsMethod = QueueServiceGrpc.getListTagsMethod) == null) {
          QueueServiceGrpc.getListTagsMethod = getListTagsMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.ListTagsRequest, com.tagq.v1.ListTagsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListTags"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ListTagsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ListTagsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("ListTags"))
              .build();
        }
      }
    }
    return getListTagsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.DeleteTagRequest,
      com.tagq.v1.DeleteTagResponse> getDeleteTagMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteTag",
      requestType = com.tagq.v1.DeleteTagRequest.class,
      responseType = com.tagq.v1.DeleteTagResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.DeleteTagRequest,
      com.tagq.v1.DeleteTagResponse> getDeleteTagMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.DeleteTagRequest, com.tagq.v1.DeleteTagResponse> getDeleteTagMethod;
    if ((getDeleteTagMethod = QueueServiceGrpc.getDeleteTagMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getDeleteTagMethod = QueueServiceGrpc.getDeleteTagMethod) == null) {
          QueueServiceGrpc.getDeleteTagMethod = getDeleteTagMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.DeleteTagRequest, com.tagq.v1.DeleteTagResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteTag"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.DeleteTagRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.DeleteTagResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("DeleteTag"))
              .build();
        }
      }
    }
    return getDeleteTagMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.SeekTagRequest,
      com.tagq.v1.SeekTagResponse> getSeekTagMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SeekTag",
      requestType = com.tagq.v1.SeekTagRequest.class,
      responseType = com.tagq.v1.SeekTagResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.SeekTagRequest,
      com.tagq.v1.SeekTagResponse> getSeekTagMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.SeekTagRequest, com.tagq.v1.SeekTagResponse> getSeekTagMethod;
    if ((getSeekTagMethod = QueueServiceGrpc.getSeekTagMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getSeekTagMethod = QueueServiceGrpc.getSeekTagMethod) == null) {
          QueueServiceGrpc.getSeekTagMethod = getSeekTagMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.SeekTagRequest, com.tagq.v1.SeekTagResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SeekTag"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.SeekTagRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.SeekTagResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("SeekTag"))
              .build();
        }
      }
    }
    return getSeekTagMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.GetQueueRatesRequest,
      com.tagq.v1.GetQueueRatesResponse> getGetQueueRatesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetQueueRates",
      requestType = com.tagq.v1.GetQueueRatesRequest.class,
      responseType = com.tagq.v1.GetQueueRatesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.GetQueueRatesRequest,
      com.tagq.v1.GetQueueRatesResponse> getGetQueueRatesMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.GetQueueRatesRequest, com.tagq.v1.GetQueueRatesResponse> getGetQueueRatesMethod;
    if ((getGetQueueRatesMethod = QueueServiceGrpc.getGetQueueRatesMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getGetQueueRatesMethod = QueueServiceGrpc.getGetQueueRatesMethod) == null) {
          QueueServiceGrpc.getGetQueueRatesMethod = getGetQueueRatesMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.GetQueueRatesRequest, com.tagq.v1.GetQueueRatesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetQueueRates"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.GetQueueRatesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.GetQueueRatesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("GetQueueRates"))
              .build();
        }
      }
    }
    return getGetQueueRatesMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static QueueServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<QueueServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<QueueServiceStub>() {
        @java.lang.Override
        public QueueServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new QueueServiceStub(channel, callOptions);
        }
      };
    return QueueServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static QueueServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<QueueServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<QueueServiceBlockingStub>() {
        @java.lang.Override
        public QueueServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new QueueServiceBlockingStub(channel, callOptions);
        }
      };
    return QueueServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static QueueServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<QueueServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<QueueServiceFutureStub>() {
        @java.lang.Override
        public QueueServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new QueueServiceFutureStub(channel, callOptions);
        }
      };
    return QueueServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * QueueService manages queues and their tags (independent readers).
   * Every error carries a google.rpc.ErrorInfo with domain "tagq" and a reason
   * such as QUEUE_NOT_FOUND, INVALID_NAME or INVALID_ARGUMENT_RANGE; the
   * metadata key "field" names the offending request field.
   * </pre>
   */
  public static abstract class QueueServiceImplBase implements io.grpc.BindableService {

    /**
     * <pre>
     * CreateQueue creates a queue and, unless no_default_tag, its default tag.
     * Errors: INVALID_ARGUMENT (INVALID_NAME, INVALID_ARGUMENT_RANGE),
     * ALREADY_EXISTS (QUEUE_ALREADY_EXISTS).
     * </pre>
     */
    public void createQueue(com.tagq.v1.CreateQueueRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.CreateQueueResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCreateQueueMethod(), responseObserver);
    }

    /**
     * <pre>
     * GetQueue returns a queue's attributes and state. Errors: NOT_FOUND (QUEUE_NOT_FOUND).
     * </pre>
     */
    public void getQueue(com.tagq.v1.GetQueueRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.GetQueueResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetQueueMethod(), responseObserver);
    }

    /**
     * <pre>
     * ListQueues lists queues in name order (or order_by), optionally only
     * those with a prefix and/or a name containing a string, with the total
     * of matching queues; with view QUEUE_VIEW_TAGS each queue comes with its
     * tags and their state, so one call shows a page of queues as a console
     * does. With authentication on, a principal that is not an admin sees
     * only the queues it holds a permission on (by name or prefix, or as
     * their creator); a page may then hold fewer than page_size queues
     * before the last.
     * </pre>
     */
    public void listQueues(com.tagq.v1.ListQueuesRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.ListQueuesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListQueuesMethod(), responseObserver);
    }

    /**
     * <pre>
     * UpdateQueue changes the attributes named in update_mask.
     * </pre>
     */
    public void updateQueue(com.tagq.v1.UpdateQueueRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.UpdateQueueResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getUpdateQueueMethod(), responseObserver);
    }

    /**
     * <pre>
     * DeleteQueue removes a queue with every message, tag and counter.
     * </pre>
     */
    public void deleteQueue(com.tagq.v1.DeleteQueueRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.DeleteQueueResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteQueueMethod(), responseObserver);
    }

    /**
     * <pre>
     * PurgeQueue drops every message; attributes, tags and totals stay.
     * </pre>
     */
    public void purgeQueue(com.tagq.v1.PurgeQueueRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.PurgeQueueResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPurgeQueueMethod(), responseObserver);
    }

    /**
     * <pre>
     * CreateTag adds an independent reader to a queue. Errors: NOT_FOUND
     * (QUEUE_NOT_FOUND), ALREADY_EXISTS (TAG_ALREADY_EXISTS),
     * RESOURCE_EXHAUSTED (TOO_MANY_TAGS).
     * </pre>
     */
    public void createTag(com.tagq.v1.CreateTagRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.CreateTagResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCreateTagMethod(), responseObserver);
    }

    /**
     * <pre>
     * GetTag returns a tag with its exact state counters.
     * </pre>
     */
    public void getTag(com.tagq.v1.GetTagRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.GetTagResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetTagMethod(), responseObserver);
    }

    /**
     * <pre>
     * ListTags lists a queue's tags in name order, with their state.
     * </pre>
     */
    public void listTags(com.tagq.v1.ListTagsRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.ListTagsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListTagsMethod(), responseObserver);
    }

    /**
     * <pre>
     * DeleteTag removes a tag, its in-flight messages and its counters.
     * </pre>
     */
    public void deleteTag(com.tagq.v1.DeleteTagRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.DeleteTagResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteTagMethod(), responseObserver);
    }

    /**
     * <pre>
     * SeekTag moves a tag's cursor to a time or a message id (S22, as
     * Pub/Sub's Seek and JetStream's replay): the retained messages after it
     * are available again to that tag only, in send order; everything the
     * tag had in flight is dropped from it, and their receipt handles end (a
     * delete with one deletes nothing, a visibility change or dead gets
     * RECEIPT_HANDLE_STALE). Receive counts start again; the tag's totals,
     * config and filter stay; other tags are not touched. Without
     * retain_acked_messages, messages every tag had finished may be gone:
     * a seek finds only what the queue retains. Needs HANDLE on the queue
     * (receive and settle), for that tag where receiving is limited to
     * tags. Errors: INVALID_ARGUMENT (INVALID_NAME, INVALID_ARGUMENT_RANGE:
     * no target, or a malformed message_id), NOT_FOUND (QUEUE_NOT_FOUND,
     * TAG_NOT_FOUND, MESSAGE_NOT_FOUND: the id is not retained).
     * </pre>
     */
    public void seekTag(com.tagq.v1.SeekTagRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.SeekTagResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSeekTagMethod(), responseObserver);
    }

    /**
     * <pre>
     * GetQueueRates is a queue's message rates over time, per second, for
     * the queue and each tag (or one tag): one point per 10 s over the last
     * hour at most (RabbitMQ's management rates), kept by tagqd in Redis, so
     * every replica serves the same history and a restart keeps it. Needs
     * GET_QUEUE_INFO on the queue. Errors: INVALID_ARGUMENT
     * (INVALID_NAME, INVALID_ARGUMENT_RANGE: window_seconds), NOT_FOUND
     * (QUEUE_NOT_FOUND, TAG_NOT_FOUND).
     * </pre>
     */
    public void getQueueRates(com.tagq.v1.GetQueueRatesRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.GetQueueRatesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetQueueRatesMethod(), responseObserver);
    }

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
          .addMethod(
            getCreateQueueMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.CreateQueueRequest,
                com.tagq.v1.CreateQueueResponse>(
                  this, METHODID_CREATE_QUEUE)))
          .addMethod(
            getGetQueueMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.GetQueueRequest,
                com.tagq.v1.GetQueueResponse>(
                  this, METHODID_GET_QUEUE)))
          .addMethod(
            getListQueuesMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.ListQueuesRequest,
                com.tagq.v1.ListQueuesResponse>(
                  this, METHODID_LIST_QUEUES)))
          .addMethod(
            getUpdateQueueMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.UpdateQueueRequest,
                com.tagq.v1.UpdateQueueResponse>(
                  this, METHODID_UPDATE_QUEUE)))
          .addMethod(
            getDeleteQueueMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.DeleteQueueRequest,
                com.tagq.v1.DeleteQueueResponse>(
                  this, METHODID_DELETE_QUEUE)))
          .addMethod(
            getPurgeQueueMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.PurgeQueueRequest,
                com.tagq.v1.PurgeQueueResponse>(
                  this, METHODID_PURGE_QUEUE)))
          .addMethod(
            getCreateTagMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.CreateTagRequest,
                com.tagq.v1.CreateTagResponse>(
                  this, METHODID_CREATE_TAG)))
          .addMethod(
            getGetTagMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.GetTagRequest,
                com.tagq.v1.GetTagResponse>(
                  this, METHODID_GET_TAG)))
          .addMethod(
            getListTagsMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.ListTagsRequest,
                com.tagq.v1.ListTagsResponse>(
                  this, METHODID_LIST_TAGS)))
          .addMethod(
            getDeleteTagMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.DeleteTagRequest,
                com.tagq.v1.DeleteTagResponse>(
                  this, METHODID_DELETE_TAG)))
          .addMethod(
            getSeekTagMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.SeekTagRequest,
                com.tagq.v1.SeekTagResponse>(
                  this, METHODID_SEEK_TAG)))
          .addMethod(
            getGetQueueRatesMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.GetQueueRatesRequest,
                com.tagq.v1.GetQueueRatesResponse>(
                  this, METHODID_GET_QUEUE_RATES)))
          .build();
    }
  }

  /**
   * <pre>
   * QueueService manages queues and their tags (independent readers).
   * Every error carries a google.rpc.ErrorInfo with domain "tagq" and a reason
   * such as QUEUE_NOT_FOUND, INVALID_NAME or INVALID_ARGUMENT_RANGE; the
   * metadata key "field" names the offending request field.
   * </pre>
   */
  public static final class QueueServiceStub extends io.grpc.stub.AbstractAsyncStub<QueueServiceStub> {
    private QueueServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected QueueServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new QueueServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * CreateQueue creates a queue and, unless no_default_tag, its default tag.
     * Errors: INVALID_ARGUMENT (INVALID_NAME, INVALID_ARGUMENT_RANGE),
     * ALREADY_EXISTS (QUEUE_ALREADY_EXISTS).
     * </pre>
     */
    public void createQueue(com.tagq.v1.CreateQueueRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.CreateQueueResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCreateQueueMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * GetQueue returns a queue's attributes and state. Errors: NOT_FOUND (QUEUE_NOT_FOUND).
     * </pre>
     */
    public void getQueue(com.tagq.v1.GetQueueRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.GetQueueResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetQueueMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ListQueues lists queues in name order (or order_by), optionally only
     * those with a prefix and/or a name containing a string, with the total
     * of matching queues; with view QUEUE_VIEW_TAGS each queue comes with its
     * tags and their state, so one call shows a page of queues as a console
     * does. With authentication on, a principal that is not an admin sees
     * only the queues it holds a permission on (by name or prefix, or as
     * their creator); a page may then hold fewer than page_size queues
     * before the last.
     * </pre>
     */
    public void listQueues(com.tagq.v1.ListQueuesRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.ListQueuesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListQueuesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * UpdateQueue changes the attributes named in update_mask.
     * </pre>
     */
    public void updateQueue(com.tagq.v1.UpdateQueueRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.UpdateQueueResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getUpdateQueueMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * DeleteQueue removes a queue with every message, tag and counter.
     * </pre>
     */
    public void deleteQueue(com.tagq.v1.DeleteQueueRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.DeleteQueueResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteQueueMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * PurgeQueue drops every message; attributes, tags and totals stay.
     * </pre>
     */
    public void purgeQueue(com.tagq.v1.PurgeQueueRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.PurgeQueueResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPurgeQueueMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * CreateTag adds an independent reader to a queue. Errors: NOT_FOUND
     * (QUEUE_NOT_FOUND), ALREADY_EXISTS (TAG_ALREADY_EXISTS),
     * RESOURCE_EXHAUSTED (TOO_MANY_TAGS).
     * </pre>
     */
    public void createTag(com.tagq.v1.CreateTagRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.CreateTagResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCreateTagMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * GetTag returns a tag with its exact state counters.
     * </pre>
     */
    public void getTag(com.tagq.v1.GetTagRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.GetTagResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetTagMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ListTags lists a queue's tags in name order, with their state.
     * </pre>
     */
    public void listTags(com.tagq.v1.ListTagsRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.ListTagsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListTagsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * DeleteTag removes a tag, its in-flight messages and its counters.
     * </pre>
     */
    public void deleteTag(com.tagq.v1.DeleteTagRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.DeleteTagResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteTagMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * SeekTag moves a tag's cursor to a time or a message id (S22, as
     * Pub/Sub's Seek and JetStream's replay): the retained messages after it
     * are available again to that tag only, in send order; everything the
     * tag had in flight is dropped from it, and their receipt handles end (a
     * delete with one deletes nothing, a visibility change or dead gets
     * RECEIPT_HANDLE_STALE). Receive counts start again; the tag's totals,
     * config and filter stay; other tags are not touched. Without
     * retain_acked_messages, messages every tag had finished may be gone:
     * a seek finds only what the queue retains. Needs HANDLE on the queue
     * (receive and settle), for that tag where receiving is limited to
     * tags. Errors: INVALID_ARGUMENT (INVALID_NAME, INVALID_ARGUMENT_RANGE:
     * no target, or a malformed message_id), NOT_FOUND (QUEUE_NOT_FOUND,
     * TAG_NOT_FOUND, MESSAGE_NOT_FOUND: the id is not retained).
     * </pre>
     */
    public void seekTag(com.tagq.v1.SeekTagRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.SeekTagResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSeekTagMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * GetQueueRates is a queue's message rates over time, per second, for
     * the queue and each tag (or one tag): one point per 10 s over the last
     * hour at most (RabbitMQ's management rates), kept by tagqd in Redis, so
     * every replica serves the same history and a restart keeps it. Needs
     * GET_QUEUE_INFO on the queue. Errors: INVALID_ARGUMENT
     * (INVALID_NAME, INVALID_ARGUMENT_RANGE: window_seconds), NOT_FOUND
     * (QUEUE_NOT_FOUND, TAG_NOT_FOUND).
     * </pre>
     */
    public void getQueueRates(com.tagq.v1.GetQueueRatesRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.GetQueueRatesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetQueueRatesMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * <pre>
   * QueueService manages queues and their tags (independent readers).
   * Every error carries a google.rpc.ErrorInfo with domain "tagq" and a reason
   * such as QUEUE_NOT_FOUND, INVALID_NAME or INVALID_ARGUMENT_RANGE; the
   * metadata key "field" names the offending request field.
   * </pre>
   */
  public static final class QueueServiceBlockingStub extends io.grpc.stub.AbstractBlockingStub<QueueServiceBlockingStub> {
    private QueueServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected QueueServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new QueueServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * CreateQueue creates a queue and, unless no_default_tag, its default tag.
     * Errors: INVALID_ARGUMENT (INVALID_NAME, INVALID_ARGUMENT_RANGE),
     * ALREADY_EXISTS (QUEUE_ALREADY_EXISTS).
     * </pre>
     */
    public com.tagq.v1.CreateQueueResponse createQueue(com.tagq.v1.CreateQueueRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCreateQueueMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * GetQueue returns a queue's attributes and state. Errors: NOT_FOUND (QUEUE_NOT_FOUND).
     * </pre>
     */
    public com.tagq.v1.GetQueueResponse getQueue(com.tagq.v1.GetQueueRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetQueueMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListQueues lists queues in name order (or order_by), optionally only
     * those with a prefix and/or a name containing a string, with the total
     * of matching queues; with view QUEUE_VIEW_TAGS each queue comes with its
     * tags and their state, so one call shows a page of queues as a console
     * does. With authentication on, a principal that is not an admin sees
     * only the queues it holds a permission on (by name or prefix, or as
     * their creator); a page may then hold fewer than page_size queues
     * before the last.
     * </pre>
     */
    public com.tagq.v1.ListQueuesResponse listQueues(com.tagq.v1.ListQueuesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListQueuesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * UpdateQueue changes the attributes named in update_mask.
     * </pre>
     */
    public com.tagq.v1.UpdateQueueResponse updateQueue(com.tagq.v1.UpdateQueueRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getUpdateQueueMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * DeleteQueue removes a queue with every message, tag and counter.
     * </pre>
     */
    public com.tagq.v1.DeleteQueueResponse deleteQueue(com.tagq.v1.DeleteQueueRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteQueueMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * PurgeQueue drops every message; attributes, tags and totals stay.
     * </pre>
     */
    public com.tagq.v1.PurgeQueueResponse purgeQueue(com.tagq.v1.PurgeQueueRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPurgeQueueMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * CreateTag adds an independent reader to a queue. Errors: NOT_FOUND
     * (QUEUE_NOT_FOUND), ALREADY_EXISTS (TAG_ALREADY_EXISTS),
     * RESOURCE_EXHAUSTED (TOO_MANY_TAGS).
     * </pre>
     */
    public com.tagq.v1.CreateTagResponse createTag(com.tagq.v1.CreateTagRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCreateTagMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * GetTag returns a tag with its exact state counters.
     * </pre>
     */
    public com.tagq.v1.GetTagResponse getTag(com.tagq.v1.GetTagRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetTagMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListTags lists a queue's tags in name order, with their state.
     * </pre>
     */
    public com.tagq.v1.ListTagsResponse listTags(com.tagq.v1.ListTagsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListTagsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * DeleteTag removes a tag, its in-flight messages and its counters.
     * </pre>
     */
    public com.tagq.v1.DeleteTagResponse deleteTag(com.tagq.v1.DeleteTagRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteTagMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * SeekTag moves a tag's cursor to a time or a message id (S22, as
     * Pub/Sub's Seek and JetStream's replay): the retained messages after it
     * are available again to that tag only, in send order; everything the
     * tag had in flight is dropped from it, and their receipt handles end (a
     * delete with one deletes nothing, a visibility change or dead gets
     * RECEIPT_HANDLE_STALE). Receive counts start again; the tag's totals,
     * config and filter stay; other tags are not touched. Without
     * retain_acked_messages, messages every tag had finished may be gone:
     * a seek finds only what the queue retains. Needs HANDLE on the queue
     * (receive and settle), for that tag where receiving is limited to
     * tags. Errors: INVALID_ARGUMENT (INVALID_NAME, INVALID_ARGUMENT_RANGE:
     * no target, or a malformed message_id), NOT_FOUND (QUEUE_NOT_FOUND,
     * TAG_NOT_FOUND, MESSAGE_NOT_FOUND: the id is not retained).
     * </pre>
     */
    public com.tagq.v1.SeekTagResponse seekTag(com.tagq.v1.SeekTagRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSeekTagMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * GetQueueRates is a queue's message rates over time, per second, for
     * the queue and each tag (or one tag): one point per 10 s over the last
     * hour at most (RabbitMQ's management rates), kept by tagqd in Redis, so
     * every replica serves the same history and a restart keeps it. Needs
     * GET_QUEUE_INFO on the queue. Errors: INVALID_ARGUMENT
     * (INVALID_NAME, INVALID_ARGUMENT_RANGE: window_seconds), NOT_FOUND
     * (QUEUE_NOT_FOUND, TAG_NOT_FOUND).
     * </pre>
     */
    public com.tagq.v1.GetQueueRatesResponse getQueueRates(com.tagq.v1.GetQueueRatesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetQueueRatesMethod(), getCallOptions(), request);
    }
  }

  /**
   * <pre>
   * QueueService manages queues and their tags (independent readers).
   * Every error carries a google.rpc.ErrorInfo with domain "tagq" and a reason
   * such as QUEUE_NOT_FOUND, INVALID_NAME or INVALID_ARGUMENT_RANGE; the
   * metadata key "field" names the offending request field.
   * </pre>
   */
  public static final class QueueServiceFutureStub extends io.grpc.stub.AbstractFutureStub<QueueServiceFutureStub> {
    private QueueServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected QueueServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new QueueServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * CreateQueue creates a queue and, unless no_default_tag, its default tag.
     * Errors: INVALID_ARGUMENT (INVALID_NAME, INVALID_ARGUMENT_RANGE),
     * ALREADY_EXISTS (QUEUE_ALREADY_EXISTS).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.CreateQueueResponse> createQueue(
        com.tagq.v1.CreateQueueRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCreateQueueMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * GetQueue returns a queue's attributes and state. Errors: NOT_FOUND (QUEUE_NOT_FOUND).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.GetQueueResponse> getQueue(
        com.tagq.v1.GetQueueRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetQueueMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ListQueues lists queues in name order (or order_by), optionally only
     * those with a prefix and/or a name containing a string, with the total
     * of matching queues; with view QUEUE_VIEW_TAGS each queue comes with its
     * tags and their state, so one call shows a page of queues as a console
     * does. With authentication on, a principal that is not an admin sees
     * only the queues it holds a permission on (by name or prefix, or as
     * their creator); a page may then hold fewer than page_size queues
     * before the last.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.ListQueuesResponse> listQueues(
        com.tagq.v1.ListQueuesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListQueuesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * UpdateQueue changes the attributes named in update_mask.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.UpdateQueueResponse> updateQueue(
        com.tagq.v1.UpdateQueueRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getUpdateQueueMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * DeleteQueue removes a queue with every message, tag and counter.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.DeleteQueueResponse> deleteQueue(
        com.tagq.v1.DeleteQueueRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteQueueMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * PurgeQueue drops every message; attributes, tags and totals stay.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.PurgeQueueResponse> purgeQueue(
        com.tagq.v1.PurgeQueueRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPurgeQueueMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * CreateTag adds an independent reader to a queue. Errors: NOT_FOUND
     * (QUEUE_NOT_FOUND), ALREADY_EXISTS (TAG_ALREADY_EXISTS),
     * RESOURCE_EXHAUSTED (TOO_MANY_TAGS).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.CreateTagResponse> createTag(
        com.tagq.v1.CreateTagRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCreateTagMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * GetTag returns a tag with its exact state counters.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.GetTagResponse> getTag(
        com.tagq.v1.GetTagRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetTagMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ListTags lists a queue's tags in name order, with their state.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.ListTagsResponse> listTags(
        com.tagq.v1.ListTagsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListTagsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * DeleteTag removes a tag, its in-flight messages and its counters.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.DeleteTagResponse> deleteTag(
        com.tagq.v1.DeleteTagRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteTagMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * SeekTag moves a tag's cursor to a time or a message id (S22, as
     * Pub/Sub's Seek and JetStream's replay): the retained messages after it
     * are available again to that tag only, in send order; everything the
     * tag had in flight is dropped from it, and their receipt handles end (a
     * delete with one deletes nothing, a visibility change or dead gets
     * RECEIPT_HANDLE_STALE). Receive counts start again; the tag's totals,
     * config and filter stay; other tags are not touched. Without
     * retain_acked_messages, messages every tag had finished may be gone:
     * a seek finds only what the queue retains. Needs HANDLE on the queue
     * (receive and settle), for that tag where receiving is limited to
     * tags. Errors: INVALID_ARGUMENT (INVALID_NAME, INVALID_ARGUMENT_RANGE:
     * no target, or a malformed message_id), NOT_FOUND (QUEUE_NOT_FOUND,
     * TAG_NOT_FOUND, MESSAGE_NOT_FOUND: the id is not retained).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.SeekTagResponse> seekTag(
        com.tagq.v1.SeekTagRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSeekTagMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * GetQueueRates is a queue's message rates over time, per second, for
     * the queue and each tag (or one tag): one point per 10 s over the last
     * hour at most (RabbitMQ's management rates), kept by tagqd in Redis, so
     * every replica serves the same history and a restart keeps it. Needs
     * GET_QUEUE_INFO on the queue. Errors: INVALID_ARGUMENT
     * (INVALID_NAME, INVALID_ARGUMENT_RANGE: window_seconds), NOT_FOUND
     * (QUEUE_NOT_FOUND, TAG_NOT_FOUND).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.GetQueueRatesResponse> getQueueRates(
        com.tagq.v1.GetQueueRatesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetQueueRatesMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_CREATE_QUEUE = 0;
  private static final int METHODID_GET_QUEUE = 1;
  private static final int METHODID_LIST_QUEUES = 2;
  private static final int METHODID_UPDATE_QUEUE = 3;
  private static final int METHODID_DELETE_QUEUE = 4;
  private static final int METHODID_PURGE_QUEUE = 5;
  private static final int METHODID_CREATE_TAG = 6;
  private static final int METHODID_GET_TAG = 7;
  private static final int METHODID_LIST_TAGS = 8;
  private static final int METHODID_DELETE_TAG = 9;
  private static final int METHODID_SEEK_TAG = 10;
  private static final int METHODID_GET_QUEUE_RATES = 11;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final QueueServiceImplBase serviceImpl;
    private final int methodId;

    MethodHandlers(QueueServiceImplBase serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_CREATE_QUEUE:
          serviceImpl.createQueue((com.tagq.v1.CreateQueueRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.CreateQueueResponse>) responseObserver);
          break;
        case METHODID_GET_QUEUE:
          serviceImpl.getQueue((com.tagq.v1.GetQueueRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.GetQueueResponse>) responseObserver);
          break;
        case METHODID_LIST_QUEUES:
          serviceImpl.listQueues((com.tagq.v1.ListQueuesRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.ListQueuesResponse>) responseObserver);
          break;
        case METHODID_UPDATE_QUEUE:
          serviceImpl.updateQueue((com.tagq.v1.UpdateQueueRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.UpdateQueueResponse>) responseObserver);
          break;
        case METHODID_DELETE_QUEUE:
          serviceImpl.deleteQueue((com.tagq.v1.DeleteQueueRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.DeleteQueueResponse>) responseObserver);
          break;
        case METHODID_PURGE_QUEUE:
          serviceImpl.purgeQueue((com.tagq.v1.PurgeQueueRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.PurgeQueueResponse>) responseObserver);
          break;
        case METHODID_CREATE_TAG:
          serviceImpl.createTag((com.tagq.v1.CreateTagRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.CreateTagResponse>) responseObserver);
          break;
        case METHODID_GET_TAG:
          serviceImpl.getTag((com.tagq.v1.GetTagRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.GetTagResponse>) responseObserver);
          break;
        case METHODID_LIST_TAGS:
          serviceImpl.listTags((com.tagq.v1.ListTagsRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.ListTagsResponse>) responseObserver);
          break;
        case METHODID_DELETE_TAG:
          serviceImpl.deleteTag((com.tagq.v1.DeleteTagRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.DeleteTagResponse>) responseObserver);
          break;
        case METHODID_SEEK_TAG:
          serviceImpl.seekTag((com.tagq.v1.SeekTagRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.SeekTagResponse>) responseObserver);
          break;
        case METHODID_GET_QUEUE_RATES:
          serviceImpl.getQueueRates((com.tagq.v1.GetQueueRatesRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.GetQueueRatesResponse>) responseObserver);
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

  private static abstract class QueueServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    QueueServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return com.tagq.v1.QueueProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("QueueService");
    }
  }

  private static final class QueueServiceFileDescriptorSupplier
      extends QueueServiceBaseDescriptorSupplier {
    QueueServiceFileDescriptorSupplier() {}
  }

  private static final class QueueServiceMethodDescriptorSupplier
      extends QueueServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final String methodName;

    QueueServiceMethodDescriptorSupplier(String methodName) {
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
      synchronized (QueueServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new QueueServiceFileDescriptorSupplier())
              .addMethod(getCreateQueueMethod())
              .addMethod(getGetQueueMethod())
              .addMethod(getListQueuesMethod())
              .addMethod(getUpdateQueueMethod())
              .addMethod(getDeleteQueueMethod())
              .addMethod(getPurgeQueueMethod())
              .addMethod(getCreateTagMethod())
              .addMethod(getGetTagMethod())
              .addMethod(getListTagsMethod())
              .addMethod(getDeleteTagMethod())
              .addMethod(getSeekTagMethod())
              .addMethod(getGetQueueRatesMethod())
              .build();
        }
      }
    }
    return result;
  }
}
