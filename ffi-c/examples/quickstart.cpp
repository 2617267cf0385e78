// Quickstart in C++: create a topic, produce 1,000 records, consume them
// through a consumer group and commit.
//   usage: quickstart [BROKER_ADDR]   (default 127.0.0.1:9000)
// Build: c++ quickstart.cpp $(pkg-config --cflags --libs cursus++)
#include "cursus.hpp"

#include <chrono>
#include <future>
#include <iostream>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

int main(int argc, char **argv) try {
  const std::string broker = argc > 1 ? argv[1] : "127.0.0.1:9000";
  const std::string topic = "quickstart-cpp", group = "quickstart-cpp";
  const int records = 1000;
  auto started = Clock::now();

  // The topic, with 3 partitions. Creating a topic that already exists with
  // the same settings succeeds, so the quickstart can run again.
  cursus::Admin admin(cursus::Config(cursus::Kind::Admin, {{"bootstrap_servers", broker}}));
  admin.create_topic(topic, 3);
  admin.close();

  // Produce: queue every record (each send_async returns a future), flush,
  // then check every delivery (get() throws the error of a failed one).
  cursus::Producer producer(cursus::Config(cursus::Kind::Producer, {{"bootstrap_servers", broker}}));
  std::vector<std::future<cursus::RecordMetadata>> deliveries;
  for (int i = 0; i < records; i++) {
    std::string key = "key-" + std::to_string(i), value = "cpp record " + std::to_string(i);
    deliveries.push_back(producer.send_async(topic, value, key));
  }
  producer.flush();
  for (auto &d : deliveries) d.get();
  producer.close();

  // Consume through the group until all records arrived (at most 60 s).
  cursus::Consumer consumer(cursus::Config(cursus::Kind::Consumer, {
      {"bootstrap_servers", broker}, {"group_id", group}, {"auto_offset_reset", "earliest"}}));
  consumer.subscribe({topic});
  int consumed = 0;
  auto deadline = Clock::now() + 60s;
  while (consumed < records && Clock::now() < deadline) {
    if (auto message = consumer.poll(500ms)) consumed++;  // std::nullopt: nothing within 500 ms
  }
  if (consumed < records) {
    std::cerr << "cpp quickstart: consumed only " << consumed << " of " << records << " records in 60 s\n";
    return 1;
  }
  consumer.commit();
  consumer.close();

  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  std::cout << "cpp: produced " << records << ", consumed " << consumed << " through group " << group
            << ", committed (" << elapsed << " ms)\n";
  return 0;
} catch (const cursus::Error &e) {
  // e.what() is "code (class): message"; code(), error_class(), retryable()
  // and fields() are there to branch on.
  std::cerr << "cpp quickstart failed: " << e.what() << "\n";
  return 1;
}
