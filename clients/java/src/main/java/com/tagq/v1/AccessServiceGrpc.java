package com.tagq.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * AccessService manages who may call tagq when tagqd runs with --auth (S18):
 * principals, their API keys, and EMQ-style permissions per queue (a name or
 * a prefix such as orders-*), with receiving limitable to named tags.
 * Principals and keys are managed by admin principals; a principal may also
 * issue, list and revoke its own keys (key rotation). SetPermission and
 * RevokePermission need FULL_CONTROL on the queue (a queue's creator has
 * it; prefixes need an admin). GetPermission needs nothing for one's own
 * permission, else ADMIN_QUEUE on the queue. Errors: NOT_FOUND
 * (PRINCIPAL_NOT_FOUND, KEY_NOT_FOUND, PERMISSION_NOT_FOUND), ALREADY_EXISTS
 * (PRINCIPAL_ALREADY_EXISTS), INVALID_ARGUMENT (INVALID_NAME,
 * INVALID_PERMISSION), PERMISSION_DENIED, UNAUTHENTICATED.
 * </pre>
 */
@javax.annotation.Generated(
    value = "by gRPC proto compiler",
    comments = "Source: tagq/v1/access.proto")
@io.grpc.stub.annotations.GrpcGenerated
public final class AccessServiceGrpc {

  private AccessServiceGrpc() {}

  public static final String SERVICE_NAME = "tagq.v1.AccessService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.CreatePrincipalRequest,
      com.tagq.v1.CreatePrincipalResponse> getCreatePrincipalMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CreatePrincipal",
      requestType = com.tagq.v1.CreatePrincipalRequest.class,
      responseType = com.tagq.v1.CreatePrincipalResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.CreatePrincipalRequest,
      com.tagq.v1.CreatePrincipalResponse> getCreatePrincipalMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.CreatePrincipalRequest, com.tagq.v1.CreatePrincipalResponse> getCreatePrincipalMethod;
    if ((getCreatePrincipalMethod = AccessServiceGrpc.getCreatePrincipalMethod) == null) {
      synchronized (AccessServiceGrpc.class) {
        if ((getCreatePrincipalMethod = AccessServiceGrpc.getCreatePrincipalMethod) == null) {
          AccessServiceGrpc.getCreatePrincipalMethod = getCreatePrincipalMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.CreatePrincipalRequest, com.tagq.v1.CreatePrincipalResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CreatePrincipal"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.CreatePrincipalRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.CreatePrincipalResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AccessServiceMethodDescriptorSupplier("CreatePrincipal"))
              .build();
        }
      }
    }
    return getCreatePrincipalMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.GetPrincipalRequest,
      com.tagq.v1.GetPrincipalResponse> getGetPrincipalMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetPrincipal",
      requestType = com.tagq.v1.GetPrincipalRequest.class,
      responseType = com.tagq.v1.GetPrincipalResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.GetPrincipalRequest,
      com.tagq.v1.GetPrincipalResponse> getGetPrincipalMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.GetPrincipalRequest, com.tagq.v1.GetPrincipalResponse> getGetPrincipalMethod;
    if ((getGetPrincipalMethod = AccessServiceGrpc.getGetPrincipalMethod) == null) {
      synchronized (AccessServiceGrpc.class) {
        if ((getGetPrincipalMethod = AccessServiceGrpc.getGetPrincipalMethod) == null) {
          AccessServiceGrpc.getGetPrincipalMethod = getGetPrincipalMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.GetPrincipalRequest, com.tagq.v1.GetPrincipalResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetPrincipal"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.GetPrincipalRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.GetPrincipalResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AccessServiceMethodDescriptorSupplier("GetPrincipal"))
              .build();
        }
      }
    }
    return getGetPrincipalMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.ListPrincipalsRequest,
      com.tagq.v1.ListPrincipalsResponse> getListPrincipalsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListPrincipals",
      requestType = com.tagq.v1.ListPrincipalsRequest.class,
      responseType = com.tagq.v1.ListPrincipalsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.ListPrincipalsRequest,
      com.tagq.v1.ListPrincipalsResponse> getListPrincipalsMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.ListPrincipalsRequest, com.tagq.v1.ListPrincipalsResponse> getListPrincipalsMethod;
    if ((getListPrincipalsMethod = AccessServiceGrpc.getListPrincipalsMethod) == null) {
      synchronized (AccessServiceGrpc.class) {
        if ((getListPrincipalsMethod = AccessServiceGrpc.getListPrincipalsMethod) == null) {
          AccessServiceGrpc.getListPrincipalsMethod = getListPrincipalsMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.ListPrincipalsRequest, com.tagq.v1.ListPrincipalsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListPrincipals"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ListPrincipalsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ListPrincipalsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AccessServiceMethodDescriptorSupplier("ListPrincipals"))
              .build();
        }
      }
    }
    return getListPrincipalsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.DeletePrincipalRequest,
      com.tagq.v1.DeletePrincipalResponse> getDeletePrincipalMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeletePrincipal",
      requestType = com.tagq.v1.DeletePrincipalRequest.class,
      responseType = com.tagq.v1.DeletePrincipalResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.DeletePrincipalRequest,
      com.tagq.v1.DeletePrincipalResponse> getDeletePrincipalMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.DeletePrincipalRequest, com.tagq.v1.DeletePrincipalResponse> getDeletePrincipalMethod;
    if ((getDeletePrincipalMethod = AccessServiceGrpc.getDeletePrincipalMethod) == null) {
      synchronized (AccessServiceGrpc.class) {
        if ((getDeletePrincipalMethod = AccessServiceGrpc.getDeletePrincipalMethod) == null) {
          AccessServiceGrpc.getDeletePrincipalMethod = getDeletePrincipalMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.DeletePrincipalRequest, com.tagq.v1.DeletePrincipalResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeletePrincipal"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.DeletePrincipalRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.DeletePrincipalResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AccessServiceMethodDescriptorSupplier("DeletePrincipal"))
              .build();
        }
      }
    }
    return getDeletePrincipalMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.IssueKeyRequest,
      com.tagq.v1.IssueKeyResponse> getIssueKeyMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "IssueKey",
      requestType = com.tagq.v1.IssueKeyRequest.class,
      responseType = com.tagq.v1.IssueKeyResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.IssueKeyRequest,
      com.tagq.v1.IssueKeyResponse> getIssueKeyMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.IssueKeyRequest, com.tagq.v1.IssueKeyResponse> getIssueKeyMethod;
    if ((getIssueKeyMethod = AccessServiceGrpc.getIssueKeyMethod) == null) {
      synchronized (AccessServiceGrpc.class) {
        if ((getIssueKeyMethod = AccessServiceGrpc.getIssueKeyMethod) == null) {
          AccessServiceGrpc.getIssueKeyMethod = getIssueKeyMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.IssueKeyRequest, com.tagq.v1.IssueKeyResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "IssueKey"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.IssueKeyRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.IssueKeyResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AccessServiceMethodDescriptorSupplier("IssueKey"))
              .build();
        }
      }
    }
    return getIssueKeyMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.ListKeysRequest,
      com.tagq.v1.ListKeysResponse> getListKeysMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListKeys",
      requestType = com.tagq.v1.ListKeysRequest.class,
      responseType = com.tagq.v1.ListKeysResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.ListKeysRequest,
      com.tagq.v1.ListKeysResponse> getListKeysMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.ListKeysRequest, com.tagq.v1.ListKeysResponse> getListKeysMethod;
    if ((getListKeysMethod = AccessServiceGrpc.getListKeysMethod) == null) {
      synchronized (AccessServiceGrpc.class) {
        if ((getListKeysMethod = AccessServiceGrpc.getListKeysMethod) == null) {
          AccessServiceGrpc.getListKeysMethod = getListKeysMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.ListKeysRequest, com.tagq.v1.ListKeysResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListKeys"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ListKeysRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ListKeysResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AccessServiceMethodDescriptorSupplier("ListKeys"))
              .build();
        }
      }
    }
    return getListKeysMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.RevokeKeyRequest,
      com.tagq.v1.RevokeKeyResponse> getRevokeKeyMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RevokeKey",
      requestType = com.tagq.v1.RevokeKeyRequest.class,
      responseType = com.tagq.v1.RevokeKeyResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.RevokeKeyRequest,
      com.tagq.v1.RevokeKeyResponse> getRevokeKeyMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.RevokeKeyRequest, com.tagq.v1.RevokeKeyResponse> getRevokeKeyMethod;
    if ((getRevokeKeyMethod = AccessServiceGrpc.getRevokeKeyMethod) == null) {
      synchronized (AccessServiceGrpc.class) {
        if ((getRevokeKeyMethod = AccessServiceGrpc.getRevokeKeyMethod) == null) {
          AccessServiceGrpc.getRevokeKeyMethod = getRevokeKeyMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.RevokeKeyRequest, com.tagq.v1.RevokeKeyResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RevokeKey"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.RevokeKeyRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.RevokeKeyResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AccessServiceMethodDescriptorSupplier("RevokeKey"))
              .build();
        }
      }
    }
    return getRevokeKeyMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.SetPermissionRequest,
      com.tagq.v1.SetPermissionResponse> getSetPermissionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SetPermission",
      requestType = com.tagq.v1.SetPermissionRequest.class,
      responseType = com.tagq.v1.SetPermissionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.SetPermissionRequest,
      com.tagq.v1.SetPermissionResponse> getSetPermissionMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.SetPermissionRequest, com.tagq.v1.SetPermissionResponse> getSetPermissionMethod;
    if ((getSetPermissionMethod = AccessServiceGrpc.getSetPermissionMethod) == null) {
      synchronized (AccessServiceGrpc.class) {
        if ((getSetPermissionMethod = AccessServiceGrpc.getSetPermissionMethod) == null) {
          AccessServiceGrpc.getSetPermissionMethod = getSetPermissionMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.SetPermissionRequest, com.tagq.v1.SetPermissionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SetPermission"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.SetPermissionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.SetPermissionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AccessServiceMethodDescriptorSupplier("SetPermission"))
              .build();
        }
      }
    }
    return getSetPermissionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.RevokePermissionRequest,
      com.tagq.v1.RevokePermissionResponse> getRevokePermissionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RevokePermission",
      requestType = com.tagq.v1.RevokePermissionRequest.class,
      responseType = com.tagq.v1.RevokePermissionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.RevokePermissionRequest,
      com.tagq.v1.RevokePermissionResponse> getRevokePermissionMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.RevokePermissionRequest, com.tagq.v1.RevokePermissionResponse> getRevokePermissionMethod;
    if ((getRevokePermissionMethod = AccessServiceGrpc.getRevokePermissionMethod) == null) {
      synchronized (AccessServiceGrpc.class) {
        if ((getRevokePermissionMethod = AccessServiceGrpc.getRevokePermissionMethod) == null) {
          AccessServiceGrpc.getRevokePermissionMethod = getRevokePermissionMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.RevokePermissionRequest, com.tagq.v1.RevokePermissionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RevokePermission"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.RevokePermissionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.RevokePermissionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AccessServiceMethodDescriptorSupplier("RevokePermission"))
              .build();
        }
      }
    }
    return getRevokePermissionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.GetPermissionRequest,
      com.tagq.v1.GetPermissionResponse> getGetPermissionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetPermission",
      requestType = com.tagq.v1.GetPermissionRequest.class,
      responseType = com.tagq.v1.GetPermissionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.GetPermissionRequest,
      com.tagq.v1.GetPermissionResponse> getGetPermissionMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.GetPermissionRequest, com.tagq.v1.GetPermissionResponse> getGetPermissionMethod;
    if ((getGetPermissionMethod = AccessServiceGrpc.getGetPermissionMethod) == null) {
      synchronized (AccessServiceGrpc.class) {
        if ((getGetPermissionMethod = AccessServiceGrpc.getGetPermissionMethod) == null) {
          AccessServiceGrpc.getGetPermissionMethod = getGetPermissionMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.GetPermissionRequest, com.tagq.v1.GetPermissionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetPermission"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.GetPermissionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.GetPermissionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AccessServiceMethodDescriptorSupplier("GetPermission"))
              .build();
        }
      }
    }
    return getGetPermissionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<com.tagq.v1.ListPermissionsRequest,
      com.tagq.v1.ListPermissionsResponse> getListPermissionsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListPermissions",
      requestType = com.tagq.v1.ListPermissionsRequest.class,
      responseType = com.tagq.v1.ListPermissionsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<com.tagq.v1.ListPermissionsRequest,
      com.tagq.v1.ListPermissionsResponse> getListPermissionsMethod() {
    io.grpc.MethodDescriptor<com.tagq.v1.ListPermissionsRequest, com.tagq.v1.ListPermissionsResponse> getListPermissionsMethod;
    if ((getListPermissionsMethod = AccessServiceGrpc.getListPermissionsMethod) == null) {
      synchronized (AccessServiceGrpc.class) {
        if ((getListPermissionsMethod = AccessServiceGrpc.getListPermissionsMethod) == null) {
          AccessServiceGrpc.getListPermissionsMethod = getListPermissionsMethod =
              io.grpc.MethodDescriptor.<com.tagq.v1.ListPermissionsRequest, com.tagq.v1.ListPermissionsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListPermissions"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ListPermissionsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  com.tagq.v1.ListPermissionsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AccessServiceMethodDescriptorSupplier("ListPermissions"))
              .build();
        }
      }
    }
    return getListPermissionsMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static AccessServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AccessServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AccessServiceStub>() {
        @java.lang.Override
        public AccessServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AccessServiceStub(channel, callOptions);
        }
      };
    return AccessServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static AccessServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AccessServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AccessServiceBlockingStub>() {
        @java.lang.Override
        public AccessServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AccessServiceBlockingStub(channel, callOptions);
        }
      };
    return AccessServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static AccessServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AccessServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AccessServiceFutureStub>() {
        @java.lang.Override
        public AccessServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AccessServiceFutureStub(channel, callOptions);
        }
      };
    return AccessServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * AccessService manages who may call tagq when tagqd runs with --auth (S18):
   * principals, their API keys, and EMQ-style permissions per queue (a name or
   * a prefix such as orders-*), with receiving limitable to named tags.
   * Principals and keys are managed by admin principals; a principal may also
   * issue, list and revoke its own keys (key rotation). SetPermission and
   * RevokePermission need FULL_CONTROL on the queue (a queue's creator has
   * it; prefixes need an admin). GetPermission needs nothing for one's own
   * permission, else ADMIN_QUEUE on the queue. Errors: NOT_FOUND
   * (PRINCIPAL_NOT_FOUND, KEY_NOT_FOUND, PERMISSION_NOT_FOUND), ALREADY_EXISTS
   * (PRINCIPAL_ALREADY_EXISTS), INVALID_ARGUMENT (INVALID_NAME,
   * INVALID_PERMISSION), PERMISSION_DENIED, UNAUTHENTICATED.
   * </pre>
   */
  public static abstract class AccessServiceImplBase implements io.grpc.BindableService {

    /**
     * <pre>
     * CreatePrincipal adds a principal (no keys, no permissions yet).
     * </pre>
     */
    public void createPrincipal(com.tagq.v1.CreatePrincipalRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.CreatePrincipalResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCreatePrincipalMethod(), responseObserver);
    }

    /**
     * <pre>
     * GetPrincipal returns a principal.
     * </pre>
     */
    public void getPrincipal(com.tagq.v1.GetPrincipalRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.GetPrincipalResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetPrincipalMethod(), responseObserver);
    }

    /**
     * <pre>
     * ListPrincipals lists every principal in name order.
     * </pre>
     */
    public void listPrincipals(com.tagq.v1.ListPrincipalsRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.ListPrincipalsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListPrincipalsMethod(), responseObserver);
    }

    /**
     * <pre>
     * DeletePrincipal removes a principal, its keys and its permissions. The
     * queues it created stay.
     * </pre>
     */
    public void deletePrincipal(com.tagq.v1.DeletePrincipalRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.DeletePrincipalResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeletePrincipalMethod(), responseObserver);
    }

    /**
     * <pre>
     * IssueKey makes a new API key for a principal. The key itself is in
     * this response only: tagq keeps its SHA-256 hash.
     * </pre>
     */
    public void issueKey(com.tagq.v1.IssueKeyRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.IssueKeyResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getIssueKeyMethod(), responseObserver);
    }

    /**
     * <pre>
     * ListKeys lists a principal's keys: ids and times, never the keys.
     * </pre>
     */
    public void listKeys(com.tagq.v1.ListKeysRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.ListKeysResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListKeysMethod(), responseObserver);
    }

    /**
     * <pre>
     * RevokeKey deletes a key. Calls with it are refused at once on the
     * tagqd that revoked it and within a second (two at worst) on others.
     * </pre>
     */
    public void revokeKey(com.tagq.v1.RevokeKeyRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.RevokeKeyResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRevokeKeyMethod(), responseObserver);
    }

    /**
     * <pre>
     * SetPermission sets a principal's level on a queue or prefix, replacing
     * the level it had on exactly that queue or prefix.
     * </pre>
     */
    public void setPermission(com.tagq.v1.SetPermissionRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.SetPermissionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSetPermissionMethod(), responseObserver);
    }

    /**
     * <pre>
     * RevokePermission removes a principal's level on exactly that queue or
     * prefix.
     * </pre>
     */
    public void revokePermission(com.tagq.v1.RevokePermissionRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.RevokePermissionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRevokePermissionMethod(), responseObserver);
    }

    /**
     * <pre>
     * GetPermission answers what a principal may do on a queue, and why.
     * </pre>
     */
    public void getPermission(com.tagq.v1.GetPermissionRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.GetPermissionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetPermissionMethod(), responseObserver);
    }

    /**
     * <pre>
     * ListPermissions lists the permissions set, of one principal and/or on
     * one queue or prefix. Without a principal it needs an admin.
     * </pre>
     */
    public void listPermissions(com.tagq.v1.ListPermissionsRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.ListPermissionsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListPermissionsMethod(), responseObserver);
    }

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
          .addMethod(
            getCreatePrincipalMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.CreatePrincipalRequest,
                com.tagq.v1.CreatePrincipalResponse>(
                  this, METHODID_CREATE_PRINCIPAL)))
          .addMethod(
            getGetPrincipalMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.GetPrincipalRequest,
                com.tagq.v1.GetPrincipalResponse>(
                  this, METHODID_GET_PRINCIPAL)))
          .addMethod(
            getListPrincipalsMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.ListPrincipalsRequest,
                com.tagq.v1.ListPrincipalsResponse>(
                  this, METHODID_LIST_PRINCIPALS)))
          .addMethod(
            getDeletePrincipalMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.DeletePrincipalRequest,
                com.tagq.v1.DeletePrincipalResponse>(
                  this, METHODID_DELETE_PRINCIPAL)))
          .addMethod(
            getIssueKeyMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.IssueKeyRequest,
                com.tagq.v1.IssueKeyResponse>(
                  this, METHODID_ISSUE_KEY)))
          .addMethod(
            getListKeysMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.ListKeysRequest,
                com.tagq.v1.ListKeysResponse>(
                  this, METHODID_LIST_KEYS)))
          .addMethod(
            getRevokeKeyMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.RevokeKeyRequest,
                com.tagq.v1.RevokeKeyResponse>(
                  this, METHODID_REVOKE_KEY)))
          .addMethod(
            getSetPermissionMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.SetPermissionRequest,
                com.tagq.v1.SetPermissionResponse>(
                  this, METHODID_SET_PERMISSION)))
          .addMethod(
            getRevokePermissionMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.RevokePermissionRequest,
                com.tagq.v1.RevokePermissionResponse>(
                  this, METHODID_REVOKE_PERMISSION)))
          .addMethod(
            getGetPermissionMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.GetPermissionRequest,
                com.tagq.v1.GetPermissionResponse>(
                  this, METHODID_GET_PERMISSION)))
          .addMethod(
            getListPermissionsMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                com.tagq.v1.ListPermissionsRequest,
                com.tagq.v1.ListPermissionsResponse>(
                  this, METHODID_LIST_PERMISSIONS)))
          .build();
    }
  }

  /**
   * <pre>
   * AccessService manages who may call tagq when tagqd runs with --auth (S18):
   * principals, their API keys, and EMQ-style permissions per queue (a name or
   * a prefix such as orders-*), with receiving limitable to named tags.
   * Principals and keys are managed by admin principals; a principal may also
   * issue, list and revoke its own keys (key rotation). SetPermission and
   * RevokePermission need FULL_CONTROL on the queue (a queue's creator has
   * it; prefixes need an admin). GetPermission needs nothing for one's own
   * permission, else ADMIN_QUEUE on the queue. Errors: NOT_FOUND
   * (PRINCIPAL_NOT_FOUND, KEY_NOT_FOUND, PERMISSION_NOT_FOUND), ALREADY_EXISTS
   * (PRINCIPAL_ALREADY_EXISTS), INVALID_ARGUMENT (INVALID_NAME,
   * INVALID_PERMISSION), PERMISSION_DENIED, UNAUTHENTICATED.
   * </pre>
   */
  public static final class AccessServiceStub extends io.grpc.stub.AbstractAsyncStub<AccessServiceStub> {
    private AccessServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AccessServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AccessServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * CreatePrincipal adds a principal (no keys, no permissions yet).
     * </pre>
     */
    public void createPrincipal(com.tagq.v1.CreatePrincipalRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.CreatePrincipalResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCreatePrincipalMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * GetPrincipal returns a principal.
     * </pre>
     */
    public void getPrincipal(com.tagq.v1.GetPrincipalRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.GetPrincipalResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetPrincipalMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ListPrincipals lists every principal in name order.
     * </pre>
     */
    public void listPrincipals(com.tagq.v1.ListPrincipalsRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.ListPrincipalsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListPrincipalsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * DeletePrincipal removes a principal, its keys and its permissions. The
     * queues it created stay.
     * </pre>
     */
    public void deletePrincipal(com.tagq.v1.DeletePrincipalRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.DeletePrincipalResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeletePrincipalMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * IssueKey makes a new API key for a principal. The key itself is in
     * this response only: tagq keeps its SHA-256 hash.
     * </pre>
     */
    public void issueKey(com.tagq.v1.IssueKeyRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.IssueKeyResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getIssueKeyMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ListKeys lists a principal's keys: ids and times, never the keys.
     * </pre>
     */
    public void listKeys(com.tagq.v1.ListKeysRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.ListKeysResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListKeysMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * RevokeKey deletes a key. Calls with it are refused at once on the
     * tagqd that revoked it and within a second (two at worst) on others.
     * </pre>
     */
    public void revokeKey(com.tagq.v1.RevokeKeyRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.RevokeKeyResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRevokeKeyMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * SetPermission sets a principal's level on a queue or prefix, replacing
     * the level it had on exactly that queue or prefix.
     * </pre>
     */
    public void setPermission(com.tagq.v1.SetPermissionRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.SetPermissionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSetPermissionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * RevokePermission removes a principal's level on exactly that queue or
     * prefix.
     * </pre>
     */
    public void revokePermission(com.tagq.v1.RevokePermissionRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.RevokePermissionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRevokePermissionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * GetPermission answers what a principal may do on a queue, and why.
     * </pre>
     */
    public void getPermission(com.tagq.v1.GetPermissionRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.GetPermissionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetPermissionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ListPermissions lists the permissions set, of one principal and/or on
     * one queue or prefix. Without a principal it needs an admin.
     * </pre>
     */
    public void listPermissions(com.tagq.v1.ListPermissionsRequest request,
        io.grpc.stub.StreamObserver<com.tagq.v1.ListPermissionsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListPermissionsMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * <pre>
   * AccessService manages who may call tagq when tagqd runs with --auth (S18):
   * principals, their API keys, and EMQ-style permissions per queue (a name or
   * a prefix such as orders-*), with receiving limitable to named tags.
   * Principals and keys are managed by admin principals; a principal may also
   * issue, list and revoke its own keys (key rotation). SetPermission and
   * RevokePermission need FULL_CONTROL on the queue (a queue's creator has
   * it; prefixes need an admin). GetPermission needs nothing for one's own
   * permission, else ADMIN_QUEUE on the queue. Errors: NOT_FOUND
   * (PRINCIPAL_NOT_FOUND, KEY_NOT_FOUND, PERMISSION_NOT_FOUND), ALREADY_EXISTS
   * (PRINCIPAL_ALREADY_EXISTS), INVALID_ARGUMENT (INVALID_NAME,
   * INVALID_PERMISSION), PERMISSION_DENIED, UNAUTHENTICATED.
   * </pre>
   */
  public static final class AccessServiceBlockingStub extends io.grpc.stub.AbstractBlockingStub<AccessServiceBlockingStub> {
    private AccessServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AccessServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AccessServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * CreatePrincipal adds a principal (no keys, no permissions yet).
     * </pre>
     */
    public com.tagq.v1.CreatePrincipalResponse createPrincipal(com.tagq.v1.CreatePrincipalRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCreatePrincipalMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * GetPrincipal returns a principal.
     * </pre>
     */
    public com.tagq.v1.GetPrincipalResponse getPrincipal(com.tagq.v1.GetPrincipalRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetPrincipalMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListPrincipals lists every principal in name order.
     * </pre>
     */
    public com.tagq.v1.ListPrincipalsResponse listPrincipals(com.tagq.v1.ListPrincipalsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListPrincipalsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * DeletePrincipal removes a principal, its keys and its permissions. The
     * queues it created stay.
     * </pre>
     */
    public com.tagq.v1.DeletePrincipalResponse deletePrincipal(com.tagq.v1.DeletePrincipalRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeletePrincipalMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * IssueKey makes a new API key for a principal. The key itself is in
     * this response only: tagq keeps its SHA-256 hash.
     * </pre>
     */
    public com.tagq.v1.IssueKeyResponse issueKey(com.tagq.v1.IssueKeyRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getIssueKeyMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListKeys lists a principal's keys: ids and times, never the keys.
     * </pre>
     */
    public com.tagq.v1.ListKeysResponse listKeys(com.tagq.v1.ListKeysRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListKeysMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * RevokeKey deletes a key. Calls with it are refused at once on the
     * tagqd that revoked it and within a second (two at worst) on others.
     * </pre>
     */
    public com.tagq.v1.RevokeKeyResponse revokeKey(com.tagq.v1.RevokeKeyRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRevokeKeyMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * SetPermission sets a principal's level on a queue or prefix, replacing
     * the level it had on exactly that queue or prefix.
     * </pre>
     */
    public com.tagq.v1.SetPermissionResponse setPermission(com.tagq.v1.SetPermissionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSetPermissionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * RevokePermission removes a principal's level on exactly that queue or
     * prefix.
     * </pre>
     */
    public com.tagq.v1.RevokePermissionResponse revokePermission(com.tagq.v1.RevokePermissionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRevokePermissionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * GetPermission answers what a principal may do on a queue, and why.
     * </pre>
     */
    public com.tagq.v1.GetPermissionResponse getPermission(com.tagq.v1.GetPermissionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetPermissionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListPermissions lists the permissions set, of one principal and/or on
     * one queue or prefix. Without a principal it needs an admin.
     * </pre>
     */
    public com.tagq.v1.ListPermissionsResponse listPermissions(com.tagq.v1.ListPermissionsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListPermissionsMethod(), getCallOptions(), request);
    }
  }

  /**
   * <pre>
   * AccessService manages who may call tagq when tagqd runs with --auth (S18):
   * principals, their API keys, and EMQ-style permissions per queue (a name or
   * a prefix such as orders-*), with receiving limitable to named tags.
   * Principals and keys are managed by admin principals; a principal may also
   * issue, list and revoke its own keys (key rotation). SetPermission and
   * RevokePermission need FULL_CONTROL on the queue (a queue's creator has
   * it; prefixes need an admin). GetPermission needs nothing for one's own
   * permission, else ADMIN_QUEUE on the queue. Errors: NOT_FOUND
   * (PRINCIPAL_NOT_FOUND, KEY_NOT_FOUND, PERMISSION_NOT_FOUND), ALREADY_EXISTS
   * (PRINCIPAL_ALREADY_EXISTS), INVALID_ARGUMENT (INVALID_NAME,
   * INVALID_PERMISSION), PERMISSION_DENIED, UNAUTHENTICATED.
   * </pre>
   */
  public static final class AccessServiceFutureStub extends io.grpc.stub.AbstractFutureStub<AccessServiceFutureStub> {
    private AccessServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AccessServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AccessServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * CreatePrincipal adds a principal (no keys, no permissions yet).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.CreatePrincipalResponse> createPrincipal(
        com.tagq.v1.CreatePrincipalRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCreatePrincipalMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * GetPrincipal returns a principal.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.GetPrincipalResponse> getPrincipal(
        com.tagq.v1.GetPrincipalRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetPrincipalMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ListPrincipals lists every principal in name order.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.ListPrincipalsResponse> listPrincipals(
        com.tagq.v1.ListPrincipalsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListPrincipalsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * DeletePrincipal removes a principal, its keys and its permissions. The
     * queues it created stay.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.DeletePrincipalResponse> deletePrincipal(
        com.tagq.v1.DeletePrincipalRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeletePrincipalMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * IssueKey makes a new API key for a principal. The key itself is in
     * this response only: tagq keeps its SHA-256 hash.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.IssueKeyResponse> issueKey(
        com.tagq.v1.IssueKeyRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getIssueKeyMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ListKeys lists a principal's keys: ids and times, never the keys.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.ListKeysResponse> listKeys(
        com.tagq.v1.ListKeysRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListKeysMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * RevokeKey deletes a key. Calls with it are refused at once on the
     * tagqd that revoked it and within a second (two at worst) on others.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.RevokeKeyResponse> revokeKey(
        com.tagq.v1.RevokeKeyRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRevokeKeyMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * SetPermission sets a principal's level on a queue or prefix, replacing
     * the level it had on exactly that queue or prefix.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.SetPermissionResponse> setPermission(
        com.tagq.v1.SetPermissionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSetPermissionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * RevokePermission removes a principal's level on exactly that queue or
     * prefix.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.RevokePermissionResponse> revokePermission(
        com.tagq.v1.RevokePermissionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRevokePermissionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * GetPermission answers what a principal may do on a queue, and why.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.GetPermissionResponse> getPermission(
        com.tagq.v1.GetPermissionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetPermissionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ListPermissions lists the permissions set, of one principal and/or on
     * one queue or prefix. Without a principal it needs an admin.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<com.tagq.v1.ListPermissionsResponse> listPermissions(
        com.tagq.v1.ListPermissionsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListPermissionsMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_CREATE_PRINCIPAL = 0;
  private static final int METHODID_GET_PRINCIPAL = 1;
  private static final int METHODID_LIST_PRINCIPALS = 2;
  private static final int METHODID_DELETE_PRINCIPAL = 3;
  private static final int METHODID_ISSUE_KEY = 4;
  private static final int METHODID_LIST_KEYS = 5;
  private static final int METHODID_REVOKE_KEY = 6;
  private static final int METHODID_SET_PERMISSION = 7;
  private static final int METHODID_REVOKE_PERMISSION = 8;
  private static final int METHODID_GET_PERMISSION = 9;
  private static final int METHODID_LIST_PERMISSIONS = 10;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final AccessServiceImplBase serviceImpl;
    private final int methodId;

    MethodHandlers(AccessServiceImplBase serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_CREATE_PRINCIPAL:
          serviceImpl.createPrincipal((com.tagq.v1.CreatePrincipalRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.CreatePrincipalResponse>) responseObserver);
          break;
        case METHODID_GET_PRINCIPAL:
          serviceImpl.getPrincipal((com.tagq.v1.GetPrincipalRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.GetPrincipalResponse>) responseObserver);
          break;
        case METHODID_LIST_PRINCIPALS:
          serviceImpl.listPrincipals((com.tagq.v1.ListPrincipalsRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.ListPrincipalsResponse>) responseObserver);
          break;
        case METHODID_DELETE_PRINCIPAL:
          serviceImpl.deletePrincipal((com.tagq.v1.DeletePrincipalRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.DeletePrincipalResponse>) responseObserver);
          break;
        case METHODID_ISSUE_KEY:
          serviceImpl.issueKey((com.tagq.v1.IssueKeyRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.IssueKeyResponse>) responseObserver);
          break;
        case METHODID_LIST_KEYS:
          serviceImpl.listKeys((com.tagq.v1.ListKeysRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.ListKeysResponse>) responseObserver);
          break;
        case METHODID_REVOKE_KEY:
          serviceImpl.revokeKey((com.tagq.v1.RevokeKeyRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.RevokeKeyResponse>) responseObserver);
          break;
        case METHODID_SET_PERMISSION:
          serviceImpl.setPermission((com.tagq.v1.SetPermissionRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.SetPermissionResponse>) responseObserver);
          break;
        case METHODID_REVOKE_PERMISSION:
          serviceImpl.revokePermission((com.tagq.v1.RevokePermissionRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.RevokePermissionResponse>) responseObserver);
          break;
        case METHODID_GET_PERMISSION:
          serviceImpl.getPermission((com.tagq.v1.GetPermissionRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.GetPermissionResponse>) responseObserver);
          break;
        case METHODID_LIST_PERMISSIONS:
          serviceImpl.listPermissions((com.tagq.v1.ListPermissionsRequest) request,
              (io.grpc.stub.StreamObserver<com.tagq.v1.ListPermissionsResponse>) responseObserver);
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

  private static abstract class AccessServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    AccessServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return com.tagq.v1.AccessProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("AccessService");
    }
  }

  private static final class AccessServiceFileDescriptorSupplier
      extends AccessServiceBaseDescriptorSupplier {
    AccessServiceFileDescriptorSupplier() {}
  }

  private static final class AccessServiceMethodDescriptorSupplier
      extends AccessServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final String methodName;

    AccessServiceMethodDescriptorSupplier(String methodName) {
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
      synchronized (AccessServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new AccessServiceFileDescriptorSupplier())
              .addMethod(getCreatePrincipalMethod())
              .addMethod(getGetPrincipalMethod())
              .addMethod(getListPrincipalsMethod())
              .addMethod(getDeletePrincipalMethod())
              .addMethod(getIssueKeyMethod())
              .addMethod(getListKeysMethod())
              .addMethod(getRevokeKeyMethod())
              .addMethod(getSetPermissionMethod())
              .addMethod(getRevokePermissionMethod())
              .addMethod(getGetPermissionMethod())
              .addMethod(getListPermissionsMethod())
              .build();
        }
      }
    }
    return result;
  }
}
