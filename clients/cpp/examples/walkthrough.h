// A walk through tagq from C++ with the generated stubs alone: a queue read
// by two tags, a batch send, receive and delete on each tag, a message
// nacked until its redrive policy dead-letters it, the dead letter read
// back with its origin, an error's ErrorInfo, and a Consume stream. Every
// call carries an API key when one is given (tagqd --auth).
//
// walkthrough_main.cc runs it as a program; test/walkthrough_test.cc runs
// each step against a real tagqd and checks what it returns.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "google/rpc/error_details.pb.h"
#include "tagq/v1/access.grpc.pb.h"
#include "tagq/v1/message.grpc.pb.h"
#include "tagq/v1/queue.grpc.pb.h"

namespace tagq_example {

// RpcError is a failed call: its gRPC status, with the ErrorInfo details.
class RpcError : public std::runtime_error {
 public:
  explicit RpcError(const grpc::Status& status);
  const grpc::Status& status() const { return status_; }

 private:
  grpc::Status status_;
};

// ErrorInfoOf decodes the google.rpc.ErrorInfo of a failed call (reason,
// domain "tagq", metadata "field" naming the request field at fault):
// tagqd sends a google.rpc.Status in the grpc-status-details-bin trailer,
// which grpc::Status::error_details() holds. Empty when there is none (a
// transport error).
std::optional<google::rpc::ErrorInfo> ErrorInfoOf(const grpc::Status& status);

// What Walkthrough::Work did.
struct Worked {
  int received = 0;  // receives that returned a message (redeliveries too)
  int deleted = 0;   // messages the handler took, deleted in one batch per receive
  int nacked = 0;    // messages the handler refused, made visible again at once
};

// What Walkthrough::Consume saw.
struct Consumed {
  std::vector<std::string> bodies;         // the messages pushed, in order
  std::vector<std::string> confirmations;  // CONSUME_OPERATION_ACK when applied, else the error's reason
};

class Walkthrough {
 public:
  // Deadline of every call (a Consume stream gets three times as long).
  static constexpr int kDeadlineSeconds = 10;

  // Connects to tagqd at target (host:port, plaintext). With an api_key,
  // every call carries "authorization: Bearer <api_key>".
  Walkthrough(const std::string& target, const std::string& api_key = "");

  // Creates the dead-letter queue dlq, then queue with a redrive policy to
  // it (dead-letter after 2 receives by one tag), no default tag, and the
  // tags given. Returns the queue's tags as ListTags names them.
  std::vector<std::string> CreateQueue(const std::string& queue, const std::string& dlq,
                                       const std::vector<std::string>& tags);

  // Sends the bodies in one batch, each with attribute region=eu; returns
  // their message ids in order.
  std::vector<std::string> SendBatch(const std::string& queue, const std::vector<std::string>& bodies);

  // Receives the tag's messages until a receive returns none. Each message
  // the handler accepts is deleted (one DeleteMessageBatch per receive);
  // each it refuses is nacked (visibility 0), so the tag receives it again,
  // until the queue's redrive policy moves it to the dead-letter queue.
  Worked Work(const std::string& queue, const std::string& tag,
              const std::function<bool(const tagq::v1::Message&)>& handler);

  // Receives up to 10 dead letters from the dead-letter queue's default tag
  // and deletes them.
  std::vector<tagq::v1::Message> TakeDeadLetters(const std::string& dlq);

  // A tag's exact counters.
  tagq::v1::TagState TagState(const std::string& queue, const std::string& tag);

  // Creates a queue named name; returns the call's status (OK if created).
  grpc::Status TryCreateQueue(const std::string& name);

  // Opens a Consume stream on the tag, acks each of the first n messages it
  // pushes (asking for confirmations), waits for the n confirmations, then
  // closes its side and reads until the server ends the stream.
  Consumed Consume(const std::string& queue, const std::string& tag, int n);

  // The AccessService (principals, API keys, permissions), and a context
  // for a call to it: with the deadline and the API key.
  tagq::v1::AccessService::Stub& Access() { return *access_; }
  void Prepare(grpc::ClientContext* ctx, int deadline_seconds = kDeadlineSeconds) const;

 private:
  std::string authorization_;  // "Bearer <key>", or empty
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<tagq::v1::QueueService::Stub> queues_;
  std::unique_ptr<tagq::v1::MessageService::Stub> messages_;
  std::unique_ptr<tagq::v1::AccessService::Stub> access_;
};

}  // namespace tagq_example
