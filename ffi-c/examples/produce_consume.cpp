// Produce three records and consume them through a consumer group, in C++.
//   usage: produce_consume [BROKER_ADDR]   (default 127.0.0.1:9000)
#include "cursus.hpp"

#include <ctime>
#include <iostream>

using namespace std::chrono_literals;

int main(int argc, char **argv) {
  const std::string broker = argc > 1 ? argv[1] : "127.0.0.1:9000";
  const std::string topic = "example-cpp-" + std::to_string(std::time(nullptr));
  try {
    // One generic configuration for every client (Kind::Producer etc. make
    // one for a single kind, whose errors name it). The group is the
    // topic's own: a group stays bound to the topics it consumed.
    cursus::Config config(cursus::Kind::Any, {{"bootstrap_servers", broker}, {"group_id", topic}});
    std::cout << "libcursus " << cursus::version() << ", broker " << broker << "\n";
    cursus::Admin(config).create_topic(topic, 1);

    cursus::Producer producer(config);
    for (int i = 0; i < 3; i++) {
      auto payload = "hello " + std::to_string(i);
      auto meta = producer.send(topic, payload);
      std::cout << "produced " << payload << " to " << topic << "/" << meta.partition << "@" << meta.offset << "\n";
    }
    producer.close();

    cursus::Consumer consumer(config);
    consumer.subscribe({topic});
    for (int got = 0, polls = 0; got < 3 && polls < 100; polls++) {
      if (auto m = consumer.poll(500ms)) {
        std::cout << "consumed " << m->payload() << " from " << m->topic() << "/" << m->partition() << "@"
                  << m->offset() << "\n";
        got++;
      }
    }
    consumer.commit();
    consumer.close();
    std::cout << "done\n";
  } catch (const cursus::Error &e) {
    std::cerr << "error: " << e.what() << "\n";  // the same text in every language
    return 1;
  }
  return 0;
}
