// Runs the walk-through against a tagqd:
//   build/walkthrough 127.0.0.1:9090 [api-key]
// (or the API key in TAGQ_API_KEY).
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "walkthrough.h"

int main(int argc, char** argv) {
  std::string target = argc > 1 ? argv[1] : "127.0.0.1:9090";
  const char* env_key = std::getenv("TAGQ_API_KEY");
  std::string key = argc > 2 ? argv[2] : (env_key ? env_key : "");
  std::string q = "cpp-orders-" + std::to_string(getpid());
  std::string dlq = q + "-dlq";
  try {
    tagq_example::Walkthrough w(target, key);
    std::cout << "tags:";
    for (const auto& t : w.CreateQueue(q, dlq, {"billing", "shipping"})) std::cout << " " << t;
    std::cout << "\nsent " << w.SendBatch(q, {"order 1", "order 2", "poison", "order 4"}).size() << "\n";
    auto billing = w.Work(q, "billing", [](const tagq::v1::Message&) { return true; });
    std::cout << "billing: deleted " << billing.deleted << "\n";
    auto shipping = w.Work(q, "shipping", [](const tagq::v1::Message& m) { return m.body() != "poison"; });
    std::cout << "shipping: deleted " << shipping.deleted << ", nacked " << shipping.nacked << "\n";
    for (const auto& d : w.TakeDeadLetters(dlq)) {
      const auto& dl = d.dead_letter();
      std::cout << "dead letter " << d.body() << " from " << dl.source_queue_name() << "/" << dl.source_tag() << ": "
                << dl.reason() << " after " << dl.original_receive_count() << " receives\n";
    }
    auto info = tagq_example::ErrorInfoOf(w.TryCreateQueue("not a name"));
    if (info) std::cout << "error: " << info->reason() << " field " << info->metadata().at("field") << "\n";
    w.SendBatch(q, {"streamed 1", "streamed 2"});
    auto c = w.Consume(q, "billing", 2);
    std::cout << "consumed " << c.bodies.size() << ", confirmed";
    for (const auto& s : c.confirmations) std::cout << " " << s;
    std::cout << "\n";
  } catch (const std::exception& e) {
    std::cerr << "walkthrough: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
