// Runs the walk-through's steps against real tagqds (one plain, one with
// --auth) and checks what each returns. tagqd is TAGQD_BIN, else built from
// this repository with `go build ./cmd/tagqd` (run from clients/cpp: `make
// test` or run_tests.sh). Prints "N passed, M failed"; exits 1 on a failure.
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "walkthrough.h"

using tagq_example::ErrorInfoOf;
using tagq_example::RpcError;
using tagq_example::Walkthrough;

namespace {

// --- a minimal test harness -------------------------------------------------

bool current_ok = true;

std::ostream& operator<<(std::ostream& os, const std::vector<std::string>& v) {
  os << "[";
  for (size_t i = 0; i < v.size(); i++) os << (i ? ", " : "") << '"' << v[i] << '"';
  return os << "]";
}

template <class A, class B>
void ExpectEq(const A& got, const B& want, const char* expr, int line) {
  if (got == want) return;
  std::ostringstream g, w;
  g << got;
  w << want;
  std::cerr << "  walkthrough_test.cc:" << line << ": " << expr << ": got " << g.str() << ", want " << w.str() << "\n";
  current_ok = false;
}
#define EXPECT_EQ(got, want) ExpectEq((got), (want), #got, __LINE__)
#define EXPECT_TRUE(cond) ExpectEq(static_cast<bool>(cond), true, #cond, __LINE__)

// --- tagqd --------------------------------------------------------------------

// Tagqd is a real tagqd on its embedded store, on free loopback ports. It
// prints one line, TAGQ_READY grpc=HOST:PORT http=HOST:PORT, once it serves.
class Tagqd {
 public:
  Tagqd(const std::string& bin, const std::vector<std::string>& flags, const std::string& admin_key = "") {
    int out[2];
    if (pipe(out) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      dup2(out[1], 1);
      close(out[0]);
      close(out[1]);
      if (!admin_key.empty()) setenv("TAGQ_ADMIN_KEY", admin_key.c_str(), 1);
      std::vector<std::string> args = {bin, "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--sqs-addr", "127.0.0.1:0",
                                       "--log-level", "error"};
      args.insert(args.end(), flags.begin(), flags.end());
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(bin.c_str(), argv.data());
      _exit(127);
    }
    close(out[1]);
    FILE* f = fdopen(out[0], "r");
    char* line = nullptr;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, f);  // blocks until tagqd is ready or exits
    std::string first = n > 0 ? std::string(line, n) : "";
    free(line);
    fclose(f);
    if (first.rfind("TAGQ_READY ", 0) != 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      throw std::runtime_error("tagqd did not start: first line \"" + first + "\"");
    }
    auto at = first.find("grpc=") + 5;
    grpc_addr = first.substr(at, first.find_first_of(" \n", at) - at);
  }

  // SIGTERM; returns tagqd's exit code (0 when it stopped cleanly).
  int Stop() {
    kill(pid_, SIGTERM);
    for (int i = 0; i < 600; i++) {  // up to 30 s
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    return -1;
  }

  std::string grpc_addr;

 private:
  pid_t pid_ = -1;
};

const std::string kAdminKey = "the C++ walkthrough bootstrap admin key, 32+";
Tagqd* plain = nullptr;
Tagqd* authd = nullptr;

std::string Name(const std::string& what) {
  static std::mt19937_64 rng(std::random_device{}());
  std::ostringstream s;
  s << "cpp-" << what << "-" << std::hex << (rng() & 0xffffffff);
  return s.str();
}

void ExpectState(const tagq::v1::TagState& s, long received, long deleted, long dead, long in_flight,
                 long available, int line) {
  ExpectEq(s.received_total(), received, "received_total", line);
  ExpectEq(s.deleted_total(), deleted, "deleted_total", line);
  ExpectEq(s.dead_total(), dead, "dead_total", line);
  ExpectEq(s.in_flight(), in_flight, "in_flight", line);
  ExpectEq(s.available(), available, "available", line);
}

// --- the tests ---------------------------------------------------------------

void TwoTagsBatchNackUntilDeadAndTheDeadLetter() {
  Walkthrough w(plain->grpc_addr);
  std::string q = Name("orders"), dlq = q + "-dlq";
  EXPECT_EQ(w.CreateQueue(q, dlq, {"billing", "shipping"}), (std::vector<std::string>{"billing", "shipping"}));
  auto ids = w.SendBatch(q, {"order 1", "order 2", "poison", "order 4"});
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), 4u);

  auto billing = w.Work(q, "billing", [](const tagq::v1::Message&) { return true; });
  EXPECT_EQ(billing.received, 4);
  EXPECT_EQ(billing.deleted, 4);
  EXPECT_EQ(billing.nacked, 0);
  // shipping refuses the poison message: nacked on its 1st and 2nd
  // receive, dead-lettered by the 3rd (max_receive_count 2).
  auto shipping = w.Work(q, "shipping", [](const tagq::v1::Message& m) { return m.body() != "poison"; });
  EXPECT_EQ(shipping.received, 5);
  EXPECT_EQ(shipping.deleted, 3);
  EXPECT_EQ(shipping.nacked, 2);
  ExpectState(w.TagState(q, "billing"), 4, 4, 0, 0, 0, __LINE__);
  ExpectState(w.TagState(q, "shipping"), 5, 3, 1, 0, 0, __LINE__);

  auto dead = w.TakeDeadLetters(dlq);
  EXPECT_EQ(dead.size(), 1u);
  if (dead.size() != 1) return;
  const auto& d = dead[0];
  EXPECT_EQ(d.body(), "poison");
  EXPECT_EQ(d.dead_letter().source_queue_name(), q);
  EXPECT_EQ(d.dead_letter().source_tag(), "shipping");
  EXPECT_EQ(d.dead_letter().reason(), "MAX_RECEIVE_COUNT_EXCEEDED");
  EXPECT_EQ(d.dead_letter().original_message_id(), ids[2]);
  EXPECT_EQ(d.dead_letter().original_receive_count(), 2);
  EXPECT_TRUE(d.dead_letter().has_dead_timestamp());
  EXPECT_EQ(d.attributes().at("region").string_value(), "eu");
  EXPECT_EQ(d.attributes().at("DLQ.sourceQueue").string_value(), q);
  EXPECT_EQ(w.TakeDeadLetters(dlq).size(), 0u);  // taken and deleted
}

void ErrorInfoReasonAndField() {
  Walkthrough w(plain->grpc_addr);
  grpc::Status s = w.TryCreateQueue("not a name");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  auto info = ErrorInfoOf(s);
  EXPECT_TRUE(info.has_value());
  if (!info) return;
  EXPECT_EQ(info->reason(), "INVALID_NAME");
  EXPECT_EQ(info->domain(), "tagq");
  EXPECT_EQ(info->metadata().at("field"), "queue.name");
  EXPECT_TRUE(w.TryCreateQueue(Name("ok")).ok());

  std::string q = Name("nf");
  w.CreateQueue(q, q + "-dlq", {"t"});
  try {
    w.TagState(q, "missing");
    EXPECT_TRUE(!"GetTag of a missing tag returned");
  } catch (const RpcError& e) {
    EXPECT_EQ(e.status().error_code(), grpc::StatusCode::NOT_FOUND);
    auto nf = ErrorInfoOf(e.status());
    EXPECT_TRUE(nf.has_value());
    if (!nf) return;
    EXPECT_EQ(nf->reason(), "TAG_NOT_FOUND");
    EXPECT_EQ(nf->metadata().at("field"), "name");
    EXPECT_EQ(nf->metadata().at("tag"), "missing");
  }
}

void ConsumeStreamReceivesAndAcks() {
  Walkthrough w(plain->grpc_addr);
  std::string q = Name("stream");
  w.CreateQueue(q, q + "-dlq", {"worker"});
  w.SendBatch(q, {"a", "b", "c"});
  auto c = w.Consume(q, "worker", 3);
  EXPECT_EQ(c.bodies, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(c.confirmations, std::vector<std::string>(3, "CONSUME_OPERATION_ACK"));
  ExpectState(w.TagState(q, "worker"), 3, 3, 0, 0, 0, __LINE__);
}

void ApiKeyOnTagqdWithAuth() {
  std::string q = Name("auth");
  for (const std::string key : {"", "tagq_nosuchkey_0000"}) {
    Walkthrough w(authd->grpc_addr, key);
    try {
      w.TagState("any", "any");
      EXPECT_TRUE(!"a call without a known key returned");
    } catch (const RpcError& e) {
      EXPECT_EQ(e.status().error_code(), grpc::StatusCode::UNAUTHENTICATED);
      auto info = ErrorInfoOf(e.status());
      EXPECT_EQ(info ? info->reason() : "", "UNAUTHENTICATED");
    }
  }

  Walkthrough admin(authd->grpc_addr, kAdminKey);
  EXPECT_EQ(admin.CreateQueue(q, q + "-dlq", {"app"}), std::vector<std::string>{"app"});
  {
    grpc::ClientContext ctx;
    admin.Prepare(&ctx);
    tagq::v1::CreatePrincipalRequest req;
    req.mutable_principal()->set_name("cpp-app");
    tagq::v1::CreatePrincipalResponse resp;
    EXPECT_TRUE(admin.Access().CreatePrincipal(&ctx, req, &resp).ok());
  }
  {
    grpc::ClientContext ctx;
    admin.Prepare(&ctx);
    tagq::v1::SetPermissionRequest req;
    req.mutable_grant()->set_principal("cpp-app");
    req.mutable_grant()->set_queue(q);
    req.mutable_grant()->set_permission(tagq::v1::PERMISSION_SEND_HANDLE);
    tagq::v1::SetPermissionResponse resp;
    EXPECT_TRUE(admin.Access().SetPermission(&ctx, req, &resp).ok());
  }
  std::string key;
  {
    grpc::ClientContext ctx;
    admin.Prepare(&ctx);
    tagq::v1::IssueKeyRequest req;
    req.set_principal("cpp-app");
    tagq::v1::IssueKeyResponse resp;
    EXPECT_TRUE(admin.Access().IssueKey(&ctx, req, &resp).ok());
    key = resp.api_key();
  }

  Walkthrough app(authd->grpc_addr, key);
  app.SendBatch(q, {"x", "y"});
  auto c = app.Consume(q, "app", 2);  // the stream carries the key too
  EXPECT_EQ(c.bodies, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(c.confirmations, std::vector<std::string>(2, "CONSUME_OPERATION_ACK"));
  try {
    app.TagState(q, "app");
    EXPECT_TRUE(!"GetTag without GET_QUEUE_INFO returned");
  } catch (const RpcError& e) {
    EXPECT_EQ(e.status().error_code(), grpc::StatusCode::PERMISSION_DENIED);
    auto info = ErrorInfoOf(e.status());
    EXPECT_TRUE(info.has_value());
    if (info) {
      EXPECT_EQ(info->reason(), "PERMISSION_DENIED");
      EXPECT_EQ(info->metadata().at("permission"), "GET_QUEUE_INFO");
    }
  }
  ExpectState(admin.TagState(q, "app"), 2, 2, 0, 0, 0, __LINE__);
}

void TheExampleProgramRuns() {
  // build/walkthrough, next to this test binary, plain and with the admin key.
  EXPECT_EQ(std::system(("build/walkthrough " + plain->grpc_addr + " >/dev/null").c_str()), 0);
  EXPECT_EQ(std::system(("build/walkthrough " + authd->grpc_addr + " '" + kAdminKey + "' >/dev/null").c_str()), 0);
}

}  // namespace

int main() {
  std::string bin = std::getenv("TAGQD_BIN") ? std::getenv("TAGQD_BIN") : "";
  std::string tmp;
  if (bin.empty()) {
    char dir[] = "/tmp/tagqd-cpp-XXXXXX";
    if (!mkdtemp(dir)) return 2;
    tmp = dir;
    bin = tmp + "/tagqd";
    // Run from clients/cpp: the repository is two up.
    if (std::system(("cd ../.. && go build -o " + bin + " ./cmd/tagqd").c_str()) != 0) {
      std::cerr << "go build ./cmd/tagqd failed\n";
      return 2;
    }
  }
  Tagqd p(bin, {});
  Tagqd a(bin, {"--auth"}, kAdminKey);
  plain = &p;
  authd = &a;

  std::vector<std::pair<const char*, std::function<void()>>> tests = {
      {"TwoTagsBatchNackUntilDeadAndTheDeadLetter", TwoTagsBatchNackUntilDeadAndTheDeadLetter},
      {"ErrorInfoReasonAndField", ErrorInfoReasonAndField},
      {"ConsumeStreamReceivesAndAcks", ConsumeStreamReceivesAndAcks},
      {"ApiKeyOnTagqdWithAuth", ApiKeyOnTagqdWithAuth},
      {"TheExampleProgramRuns", TheExampleProgramRuns},
  };
  int passed = 0, failed = 0;
  for (auto& [name, fn] : tests) {
    current_ok = true;
    try {
      fn();
    } catch (const std::exception& e) {
      std::cerr << "  exception: " << e.what() << "\n";
      current_ok = false;
    }
    std::cout << (current_ok ? "PASS " : "FAIL ") << name << std::endl;
    (current_ok ? passed : failed)++;
  }
  int plain_exit = p.Stop(), auth_exit = a.Stop();
  if (plain_exit != 0 || auth_exit != 0) {
    std::cerr << "tagqd exit codes on SIGTERM: " << plain_exit << ", " << auth_exit << "\n";
    failed++;
  }
  if (!tmp.empty()) std::system(("rm -rf " + tmp).c_str());
  std::cout << passed << " passed, " << failed << " failed" << std::endl;
  return failed == 0 ? 0 : 1;
}
