#include "walkthrough.h"

#include <grpcpp/support/error_details.h>

#include <chrono>

#include "google/rpc/status.pb.h"

namespace tagq_example {

using tagq::v1::Message;

namespace {

void Check(const grpc::Status& status) {
  if (!status.ok()) throw RpcError(status);
}

std::string Describe(const grpc::Status& status) {
  std::string what = status.error_message();
  if (auto info = ErrorInfoOf(status)) {
    what = info->reason() + " [" + (*info->mutable_metadata())["field"] + "]: " + what;
  }
  return what;
}

}  // namespace

RpcError::RpcError(const grpc::Status& status) : std::runtime_error(Describe(status)), status_(status) {}

std::optional<google::rpc::ErrorInfo> ErrorInfoOf(const grpc::Status& status) {
  google::rpc::Status details;
  if (status.error_details().empty() || !grpc::ExtractErrorDetails(status, &details).ok()) {
    return std::nullopt;
  }
  for (const auto& any : details.details()) {
    google::rpc::ErrorInfo info;
    if (any.Is<google::rpc::ErrorInfo>() && any.UnpackTo(&info)) return info;
  }
  return std::nullopt;
}

Walkthrough::Walkthrough(const std::string& target, const std::string& api_key)
    : authorization_(api_key.empty() ? "" : "Bearer " + api_key),
      channel_(grpc::CreateChannel(target, grpc::InsecureChannelCredentials())),
      queues_(tagq::v1::QueueService::NewStub(channel_)),
      messages_(tagq::v1::MessageService::NewStub(channel_)),
      access_(tagq::v1::AccessService::NewStub(channel_)) {}

void Walkthrough::Prepare(grpc::ClientContext* ctx, int deadline_seconds) const {
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(deadline_seconds));
  // Per call rather than as CallCredentials, which gRPC sends only over a
  // secure channel: this works on plaintext loopback too. Across a network
  // use TLS (grpc::SslCredentials), as the key is a secret.
  if (!authorization_.empty()) ctx->AddMetadata("authorization", authorization_);
}

std::vector<std::string> Walkthrough::CreateQueue(const std::string& queue, const std::string& dlq,
                                                  const std::vector<std::string>& tags) {
  {
    grpc::ClientContext ctx;
    Prepare(&ctx);
    tagq::v1::CreateQueueRequest req;
    req.mutable_queue()->set_name(dlq);
    req.mutable_queue()->set_dead_letter_queue(true);
    tagq::v1::CreateQueueResponse resp;
    Check(queues_->CreateQueue(&ctx, req, &resp));
  }
  {
    grpc::ClientContext ctx;
    Prepare(&ctx);
    tagq::v1::CreateQueueRequest req;
    req.mutable_queue()->set_name(queue);
    req.mutable_queue()->mutable_redrive_policy()->set_dead_letter_queue(dlq);
    req.mutable_queue()->mutable_redrive_policy()->set_max_receive_count(2);
    req.set_no_default_tag(true);  // every reader names its tag
    tagq::v1::CreateQueueResponse resp;
    Check(queues_->CreateQueue(&ctx, req, &resp));
  }
  for (const auto& tag : tags) {
    grpc::ClientContext ctx;
    Prepare(&ctx);
    tagq::v1::CreateTagRequest req;
    req.set_queue(queue);
    req.mutable_tag()->set_name(tag);
    tagq::v1::CreateTagResponse resp;
    Check(queues_->CreateTag(&ctx, req, &resp));
  }
  grpc::ClientContext ctx;
  Prepare(&ctx);
  tagq::v1::ListTagsRequest req;
  req.set_queue(queue);
  tagq::v1::ListTagsResponse resp;
  Check(queues_->ListTags(&ctx, req, &resp));
  std::vector<std::string> names;
  for (const auto& t : resp.tags()) names.push_back(t.name());
  return names;
}

std::vector<std::string> Walkthrough::SendBatch(const std::string& queue, const std::vector<std::string>& bodies) {
  grpc::ClientContext ctx;
  Prepare(&ctx);
  tagq::v1::SendMessageBatchRequest req;
  req.set_queue(queue);
  for (size_t i = 0; i < bodies.size(); i++) {
    auto* e = req.add_entries();
    e->set_id("m" + std::to_string(i));  // names the entry in the response
    e->set_body(bodies[i]);
    (*e->mutable_attributes())["region"].set_string_value("eu");
  }
  tagq::v1::SendMessageBatchResponse resp;
  Check(messages_->SendMessageBatch(&ctx, req, &resp));
  if (resp.failed_size() > 0) {  // entries fail one by one, with a reason and a field
    throw std::runtime_error("batch entry " + resp.failed(0).id() + " refused: " + resp.failed(0).reason() + " [" +
                             resp.failed(0).field() + "]");
  }
  std::vector<std::string> ids(bodies.size());
  for (const auto& r : resp.successful()) ids.at(std::stoul(r.id().substr(1))) = r.message_id();
  return ids;
}

Worked Walkthrough::Work(const std::string& queue, const std::string& tag,
                         const std::function<bool(const Message&)>& handler) {
  Worked w;
  while (true) {
    tagq::v1::ReceiveMessageResponse got;
    {
      grpc::ClientContext ctx;
      Prepare(&ctx);
      tagq::v1::ReceiveMessageRequest req;
      req.set_queue(queue);
      req.set_tag(tag);
      req.set_max_messages(10);
      req.set_wait_seconds(0);
      Check(messages_->ReceiveMessage(&ctx, req, &got));
    }
    if (got.messages().empty()) return w;
    w.received += got.messages_size();
    tagq::v1::DeleteMessageBatchRequest done;
    done.set_queue(queue);
    for (const auto& m : got.messages()) {
      if (handler(m)) {
        auto* e = done.add_entries();
        e->set_id("d" + std::to_string(done.entries_size()));  // names the entry in the response
        e->set_receipt_handle(m.receipt_handle());
        continue;
      }
      grpc::ClientContext ctx;
      Prepare(&ctx);
      tagq::v1::ChangeMessageVisibilityRequest nack;
      nack.set_queue(queue);
      nack.set_receipt_handle(m.receipt_handle());
      nack.set_visibility_seconds(0);
      tagq::v1::ChangeMessageVisibilityResponse resp;
      Check(messages_->ChangeMessageVisibility(&ctx, nack, &resp));
      w.nacked++;
    }
    if (done.entries_size() > 0) {
      grpc::ClientContext ctx;
      Prepare(&ctx);
      tagq::v1::DeleteMessageBatchResponse resp;
      Check(messages_->DeleteMessageBatch(&ctx, done, &resp));
      if (resp.failed_size() > 0) throw std::runtime_error("delete refused: " + resp.failed(0).reason());
      w.deleted += resp.successful_size();
    }
  }
}

std::vector<Message> Walkthrough::TakeDeadLetters(const std::string& dlq) {
  tagq::v1::ReceiveMessageResponse got;
  {
    grpc::ClientContext ctx;
    Prepare(&ctx);
    tagq::v1::ReceiveMessageRequest req;
    req.set_queue(dlq);  // no tag: the dead-letter queue's default tag
    req.set_max_messages(10);
    req.set_wait_seconds(0);
    Check(messages_->ReceiveMessage(&ctx, req, &got));
  }
  if (got.messages().empty()) return {};
  tagq::v1::DeleteMessageBatchRequest done;
  done.set_queue(dlq);
  for (const auto& m : got.messages()) {
    auto* e = done.add_entries();
    e->set_id("d" + std::to_string(done.entries_size()));
    e->set_receipt_handle(m.receipt_handle());
  }
  grpc::ClientContext ctx;
  Prepare(&ctx);
  tagq::v1::DeleteMessageBatchResponse resp;
  Check(messages_->DeleteMessageBatch(&ctx, done, &resp));
  return {got.messages().begin(), got.messages().end()};
}

tagq::v1::TagState Walkthrough::TagState(const std::string& queue, const std::string& tag) {
  grpc::ClientContext ctx;
  Prepare(&ctx);
  tagq::v1::GetTagRequest req;
  req.set_queue(queue);
  req.set_name(tag);
  tagq::v1::GetTagResponse resp;
  Check(queues_->GetTag(&ctx, req, &resp));
  return resp.tag().state();
}

grpc::Status Walkthrough::TryCreateQueue(const std::string& name) {
  grpc::ClientContext ctx;
  Prepare(&ctx);
  tagq::v1::CreateQueueRequest req;
  req.mutable_queue()->set_name(name);
  tagq::v1::CreateQueueResponse resp;
  return queues_->CreateQueue(&ctx, req, &resp);
}

Consumed Walkthrough::Consume(const std::string& queue, const std::string& tag, int n) {
  grpc::ClientContext ctx;
  Prepare(&ctx, 3 * kDeadlineSeconds);
  // The synchronous bidi stream: this thread alternates between reading
  // what tagqd pushes and writing settlements (one reader and one writer at
  // a time is all a ClientReaderWriter needs).
  auto stream = messages_->Consume(&ctx);
  tagq::v1::ConsumeRequest open;
  open.mutable_open()->set_queue(queue);
  open.mutable_open()->set_tag(tag);
  open.mutable_open()->set_max_outstanding_messages(n);
  open.mutable_open()->set_confirm(true);  // answer each ack once it is durable
  Consumed out;
  bool closed = !stream->Write(open);
  tagq::v1::ConsumeResponse r;
  while (stream->Read(&r)) {
    tagq::v1::ConsumeRequest acks;
    for (const auto& m : r.messages()) {
      out.bodies.push_back(m.message().body());
      acks.add_acks(m.delivery_id());  // settle by delivery id, cheaper than a receipt handle
    }
    if (acks.acks_size() > 0 && !closed) closed = !stream->Write(acks);
    for (const auto& c : r.confirmations()) {
      out.confirmations.push_back(c.has_error() ? c.error().reason()
                                                : tagq::v1::ConsumeOperation_Name(c.operation()));
    }
    if (static_cast<int>(out.confirmations.size()) >= n && !closed) {
      stream->WritesDone();  // tagqd ends the stream in turn
      closed = true;
    }
  }
  Check(stream->Finish());
  return out;
}

}  // namespace tagq_example
