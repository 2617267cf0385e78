// The C++ rows of `make bench-peer` (tools/bench-peer/README.md): cursus++
// (include/cursus.hpp, over the C ABI) against librdkafka++, the same
// workload through each.
//
//   bench_peer_cpp cursus|rdkafka produce|consume BOOTSTRAP TOPIC N
//
// The topic exists already (run.py creates it, 4 partitions). produce: a
// cold producer queues N records of 100 B, partitions round-robin, acks=1,
// linger 5 ms, batches of up to 256 KiB, each with a delivery callback that
// counts failures (the way C++ code of either library learns the outcome),
// then flushes; records/s from the first call to the end of the flush. Both
// queues hold every record (librdkafka fails a call when its queue is full).
// consume: one group member polls one record at a time; records/s from the
// first record to the last (the group join left out). Prints one JSON object.
#include "cursus.hpp"

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

constexpr int kPayload = 100;
constexpr int kPartitions = 4;
constexpr auto kPoll = std::chrono::milliseconds(1000);
constexpr auto kConsumeLimit = std::chrono::seconds(300);
using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Records/s from the first record (left out) to the last.
double consume_rate(long records, Clock::time_point first, Clock::time_point last) {
  double s = seconds(first, last);
  return s > 0 ? (records - 1) / s : 0;
}

// ---- ours: cursus++ --------------------------------------------------------

double cursus_produce(const std::string &bootstrap, const std::string &topic, long n) {
  std::string room = std::to_string(64L * 1024 * 1024 + n * 256L);  // every record fits
  cursus::Config config(cursus::Kind::Producer, {{"bootstrap_servers", bootstrap},
                                                 {"acks", "1"},
                                                 {"linger_ms", "5"},
                                                 {"batch_size", "262144"},
                                                 {"buffer_memory", room}});
  cursus::Producer producer(config);
  std::atomic<long> failed{0};
  const std::string payload(kPayload, 'x');
  auto start = Clock::now();
  for (long i = 0; i < n; i++)
    producer.send(
        topic, payload,
        [&failed](const cursus::DeliveryReport &r) {
          if (r.error) failed++;
        },
        std::nullopt, static_cast<int32_t>(i % kPartitions));
  producer.flush(std::chrono::milliseconds(CURSUS_NO_TIMEOUT));
  double total = seconds(start, Clock::now());
  producer.close();
  if (failed) throw std::runtime_error(std::to_string(failed.load()) + " records failed");
  return n / total;
}

double cursus_consume(const std::string &bootstrap, const std::string &topic, long n) {
  cursus::Config config(cursus::Kind::Consumer, {{"bootstrap_servers", bootstrap},
                                                 {"group_id", "g-" + topic},
                                                 {"auto_offset_reset", "earliest"},
                                                 {"fetch_max_records", "8192"}});
  cursus::Consumer consumer(config);
  consumer.subscribe({topic});
  long got = 0;
  Clock::time_point first{};
  auto deadline = Clock::now() + kConsumeLimit;
  while (got < n && Clock::now() < deadline)
    if (consumer.poll(kPoll) && got++ == 0) first = Clock::now();
  auto last = Clock::now();
  if (got < n) throw std::runtime_error("consumed " + std::to_string(got) + " of " + std::to_string(n));
  consumer.close();
  return consume_rate(n, first, last);
}

// ---- the peer: librdkafka++ ------------------------------------------------

std::unique_ptr<RdKafka::Conf> rd_config(const std::string &bootstrap) {
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string err;
  if (conf->set("bootstrap.servers", bootstrap, err) != RdKafka::Conf::CONF_OK) throw std::runtime_error(err);
  return conf;
}

void rd_set(RdKafka::Conf &conf, const std::string &key, const std::string &value) {
  std::string err;
  if (conf.set(key, value, err) != RdKafka::Conf::CONF_OK) throw std::runtime_error(key + ": " + err);
}

// Counts the records that failed.
class CountFailures : public RdKafka::DeliveryReportCb {
 public:
  void dr_cb(RdKafka::Message &m) override {
    if (m.err() != RdKafka::ERR_NO_ERROR) failed++;
  }
  long failed = 0;
};

double rd_produce(const std::string &bootstrap, const std::string &topic, long n) {
  auto conf = rd_config(bootstrap);
  CountFailures reports;
  rd_set(*conf, "acks", "1");
  rd_set(*conf, "linger.ms", "5");
  rd_set(*conf, "batch.size", "262144");
  rd_set(*conf, "queue.buffering.max.messages", std::to_string(n + 1000));  // every record fits
  rd_set(*conf, "queue.buffering.max.kbytes", "2097151");
  std::string err;
  if (conf->set("dr_cb", &reports, err) != RdKafka::Conf::CONF_OK) throw std::runtime_error(err);
  std::unique_ptr<RdKafka::Producer> producer(RdKafka::Producer::create(conf.get(), err));
  if (!producer) throw std::runtime_error(err);
  std::string payload(kPayload, 'x');
  auto start = Clock::now();
  for (long i = 0; i < n; i++) {
    auto e = producer->produce(topic, static_cast<int32_t>(i % kPartitions), RdKafka::Producer::RK_MSG_COPY,
                               payload.data(), payload.size(), nullptr, 0, 0, nullptr);
    if (e != RdKafka::ERR_NO_ERROR) throw std::runtime_error("produce: " + RdKafka::err2str(e));
  }
  auto flushed = producer->flush(120000);
  double total = seconds(start, Clock::now());
  if (flushed != RdKafka::ERR_NO_ERROR || producer->outq_len() != 0)
    throw std::runtime_error("flush: " + RdKafka::err2str(flushed));
  if (reports.failed) throw std::runtime_error(std::to_string(reports.failed) + " records failed");
  return n / total;
}

double rd_consume(const std::string &bootstrap, const std::string &topic, long n) {
  auto conf = rd_config(bootstrap);
  rd_set(*conf, "group.id", "g-" + topic);
  rd_set(*conf, "auto.offset.reset", "earliest");
  std::string err;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(RdKafka::KafkaConsumer::create(conf.get(), err));
  if (!consumer) throw std::runtime_error(err);
  if (auto e = consumer->subscribe({topic}); e != RdKafka::ERR_NO_ERROR)
    throw std::runtime_error("subscribe: " + RdKafka::err2str(e));
  long got = 0;
  Clock::time_point first{};
  auto deadline = Clock::now() + kConsumeLimit;
  while (got < n && Clock::now() < deadline) {
    std::unique_ptr<RdKafka::Message> m(consumer->consume(static_cast<int>(kPoll.count())));
    if (m->err() == RdKafka::ERR_NO_ERROR && got++ == 0) first = Clock::now();
  }
  auto last = Clock::now();
  if (got < n) throw std::runtime_error("consumed " + std::to_string(got) + " of " + std::to_string(n));
  consumer->close();
  return consume_rate(n, first, last);
}

}  // namespace

int main(int argc, char **argv) {
  const std::string usage = "usage: bench_peer_cpp cursus|rdkafka produce|consume BOOTSTRAP TOPIC N\n";
  if (argc != 6) {
    std::fputs(usage.c_str(), stderr);
    return 2;
  }
  const std::string client = argv[1], mode = argv[2], bootstrap = argv[3], topic = argv[4];
  long n = std::atol(argv[5]);
  bool ours = client == "cursus", produce = mode == "produce";
  if ((!ours && client != "rdkafka") || (!produce && mode != "consume") || n <= 0) {
    std::fputs(usage.c_str(), stderr);
    return 2;
  }
  try {
    double rate = ours ? (produce ? cursus_produce : cursus_consume)(bootstrap, topic, n)
                       : (produce ? rd_produce : rd_consume)(bootstrap, topic, n);
    std::string version = ours ? cursus::version() : RdKafka::version_str();
    std::printf("{\"client\": \"%s\", \"version\": \"%s\", \"mode\": \"%s\", \"records\": %ld, \"records_per_s\": %.0f}\n",
                client.c_str(), version.c_str(), mode.c_str(), n, rate);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench_peer_cpp %s %s: %s\n", client.c_str(), mode.c_str(), e.what());
    return 1;
  }
  return 0;
}
