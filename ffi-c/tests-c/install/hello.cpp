// A first program with the C++ wrapper: creates a topic, produces one
// record and consumes it through a consumer group. `make test-install`
// builds it against an installed libcursus with CMake (see CMakeLists.txt):
//
//   find_package(cursus 0.1 REQUIRED)
//   target_link_libraries(hello_cpp PRIVATE cursus::cursus++)
#include <cursus.hpp>

#include <ctime>
#include <iostream>
#include <optional>
#include <string>

using namespace std::chrono_literals;

int main(int argc, char **argv) try {
  const std::string broker = argc > 1 ? argv[1] : "127.0.0.1:9000";
  const std::string topic = "hello-cpp-" + std::to_string(std::time(nullptr)), value = "hello, cursus";

  cursus::Admin(cursus::Config(cursus::Kind::Admin, {{"bootstrap_servers", broker}})).create_topic(topic, 1);

  cursus::Producer producer(cursus::Config(cursus::Kind::Producer, {{"bootstrap_servers", broker}}));
  cursus::RecordMetadata where = producer.send(topic, value);  // waits for the acknowledgement
  std::cout << "produced \"" << value << "\" to " << topic << "/" << where.partition << "@" << where.offset << "\n";
  producer.close();

  cursus::Consumer consumer(cursus::Config(
      cursus::Kind::Consumer,
      {{"bootstrap_servers", broker}, {"group_id", topic /* a group of its own */}, {"auto_offset_reset", "earliest"}}));
  consumer.subscribe({topic});
  std::optional<cursus::Message> message;
  for (int polls = 0; !message && polls < 30; polls++) message = consumer.poll(1s);
  if (!message) {
    std::cerr << "no record within 30 s\n";
    return 1;
  }
  std::cout << "consumed \"" << message->payload() << "\" from " << message->topic() << "/" << message->partition()
            << "@" << message->offset() << "\n";
  bool same = message->payload() == value;
  consumer.commit();
  consumer.close();
  return same ? 0 : 1;
} catch (const cursus::Error &e) {
  std::cerr << "failed: " << e.what() << "\n";  // the same text in every language
  return 1;
}
