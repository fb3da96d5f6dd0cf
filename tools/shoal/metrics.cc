// `shoal run --metrics`: the run's statistics in Prometheus' text format
// (0.0.4) at /metrics, served by cpp-httplib while the run lasts.

#include <fmt/format.h>
#include <httplib.h>

#include <map>

#include "common.hh"
#include "shoal/core/element.hh"
#include "shoal/core/version.hh"
#include "shoal/offload/services.hh"

namespace shoal::tool {

namespace {

std::string label_value(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

// A handler name as part of a metric name: [a-zA-Z0-9_] only.
std::string metric_part(std::string_view v) {
  std::string out;
  for (char c : v) out += std::isalnum(static_cast<unsigned char>(c)) ? char(std::tolower(c)) : '_';
  return out;
}

// One metric family: its help and type once, then its samples.
struct Family {
  std::string help, type;
  std::string samples;
};

class Exposition {
 public:
  void add(const std::string& name, const char* type, std::string help, const std::string& labels, double v) {
    Family& f = fams_[name];
    if (f.type.empty()) f.type = type, f.help = std::move(help);
    f.samples += fmt::format("{}{}{}{}{} {}\n", name, labels.empty() ? "" : "{", labels, labels.empty() ? "" : "}", "",
                             number(v));
  }
  void raw(const std::string& name, const char* type, std::string help, const std::string& lines) {
    Family& f = fams_[name];
    f.type = type, f.help = std::move(help);
    f.samples += lines;
  }
  std::string text() const {
    std::string out;
    for (auto& [name, f] : fams_)
      out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{}", name, f.help, name, f.type, f.samples);
    return out;
  }
  static std::string number(double v) {
    if (v == double(int64_t(v)) && v < 9e15 && v > -9e15) return std::to_string(int64_t(v));
    return fmt::format("{}", v);
  }

 private:
  std::map<std::string, Family> fams_;
};

}  // namespace

std::string prometheus_text(Runtime& rt) {
  Exposition x;
  x.add("shoal_info", "gauge",
        "Shoal's version and the device offloading elements use (host or cuda; none before an element opened one)",
        fmt::format("version=\"{}\",device=\"{}\"", label_value(kVersion),
                    label_value(offload::services(rt).device_kind())),
        1);
  x.add("shoal_threads", "gauge", "worker threads", "", rt.nworkers());
  x.add("shoal_uptime_seconds", "gauge", "seconds since the run started", "", double(rt.elapsed_ns()) / 1e9);
  Accounting a = rt.accounting();
  x.add("shoal_packets_received_total", "counter", "packets that entered the graph at a source", "",
        double(a.received));
  x.add("shoal_packets_created_total", "counter", "packets made inside the graph (copies)", "", double(a.created));
  x.add("shoal_packets_sent_total", "counter", "packets delivered by a sink", "", double(a.sent));
  x.add("shoal_packets_dropped_total", "counter", "packets dropped, for any reason", "", double(a.dropped));
  x.add("shoal_packets_held", "gauge", "packets held in queues now", "", double(a.held));
  for (int w = 0; w < rt.nworkers(); ++w) {
    Worker& wk = rt.worker(w);
    const std::pair<const char*, const Stat*> kinds[] = {
        {"received", &wk.received}, {"created", &wk.created}, {"sent", &wk.sent}, {"dropped", &wk.dropped}};
    for (auto& [kind, st] : kinds)
      x.add("shoal_worker_packets_total", "counter", "packets by worker and what became of them",
            fmt::format("worker=\"{}\",kind=\"{}\"", w, kind), double(st->get()));
  }
  Router& r0 = rt.router(0);
  for (size_t i = 0; i < r0.size(); ++i) {
    Element* e = r0.element(i);
    std::string el = fmt::format("element=\"{}\",class=\"{}\"", label_value(e->name()), label_value(e->class_name()));
    for (size_t k = 0; k < e->drop_reasons().size(); ++k) {
      uint64_t n = 0;
      for (int w = 0; w < rt.nworkers(); ++w) n += rt.router(w).element(i)->drop_reasons()[k].count.get();
      const auto& reason = e->drop_reasons()[k];
      x.add("shoal_drops_total", "counter",
            "packets dropped by element and reason; kind loss: Shoal could not carry them, discard: the "
            "configuration or the protocol dropped them",
            fmt::format("{},reason=\"{}\",kind=\"{}\"", el, label_value(reason.name), reason.loss ? "loss" : "discard"),
            double(n));
    }
    for (int port = 0; port < e->noutputs(); ++port) {
      uint64_t n = 0;
      for (int w = 0; w < rt.nworkers(); ++w) n += rt.router(w).element(i)->output_count(port);
      x.add("shoal_element_output_packets_total", "counter",
            "packets that left an element by an output port (pushed or pulled): every element's rate",
            fmt::format("{},port=\"{}\"", el, port), double(n));
    }
    for (auto& hd : e->handlers()) {
      if (!hd.numeric || hd.hidden || !shown_handler(rt, e, hd)) continue;
      std::string v, err;
      double d = 0;
      if (!rt.read_handler(e->name() + "." + hd.name, v, err) || !parse_double(trim(v), d)) continue;
      x.add("shoal_element_" + metric_part(hd.name), "gauge",
            fmt::format("the numeric read handler '{}' (see shoal elements CLASS)", hd.name), el, d);
    }
  }
  // The device's occupancy, once something opened it.
  offload::Services& sv = offload::services(rt);
  if (!sv.device_detail().empty()) {
    const offload::DeviceOccupancy& o = sv.occupancy;
    x.add("shoal_offload_device_busy_seconds_total", "counter",
          "time the device had an aggregate of this run on it (submitted, not yet seen complete; the union over "
          "workers): its rate is the device's utilisation",
          "", double(o.busy_ns(offload::DeviceOccupancy::clock_ns())) / 1e9);
    x.add("shoal_offload_device_aggregates_in_flight", "gauge", "aggregates on the device now", "",
          double(o.in_flight()));
  }
  // Device batches' latency, when something offloaded.
  const auto& h = sv.latency_histogram;
  uint64_t total = 0;
  std::string lines;
  for (size_t i = 0; i < h.counts.size(); ++i) {
    total += h.counts[i].load(std::memory_order_relaxed);
    std::string le = i < h.kBoundsUs.size() ? Exposition::number(h.kBoundsUs[i] / 1e6) : "+Inf";
    lines += fmt::format("shoal_offload_latency_seconds_bucket{{le=\"{}\"}} {}\n", le, total);
  }
  if (total) {
    lines += fmt::format("shoal_offload_latency_seconds_sum {}\n", double(h.sum_ns.load()) / 1e9);
    lines += fmt::format("shoal_offload_latency_seconds_count {}\n", total);
    x.raw("shoal_offload_latency_seconds", "histogram",
          "device batches' latency, from the batch's forming to its aggregate's completion", lines);
  }
  return x.text();
}

HttpServer::~HttpServer() { stop(); }

bool HttpServer::start(const std::string& where, const char* option, const std::function<void(void*)>& routes,
                       std::string& err) {
  std::string host = "127.0.0.1", port = where;
  if (size_t c = where.rfind(':'); c != std::string::npos) host = where.substr(0, c), port = where.substr(c + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  uint64_t p = 0;
  if (!parse_uint(port, p) || p > 65535) return err = fmt::format("{}: bad port '{}'", option, port), false;
  auto srv = std::make_shared<httplib::Server>();
  srv->set_keep_alive_max_count(16);
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which would let
  // a second run share a port already in use instead of failing.
  srv->set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  routes(srv.get());
  int bound = p == 0 ? srv->bind_to_any_port(host) : (srv->bind_to_port(host, int(p)) ? int(p) : -1);
  if (bound <= 0) return err = fmt::format("{}: cannot listen on {}:{}", option, host, port), false;
  port_ = bound;
  host_ = host;
  server_ = srv;
  thread_ = std::thread([srv] { srv->listen_after_bind(); });
  return true;
}

void HttpServer::stop() {
  if (!server_) return;
  static_cast<httplib::Server*>(server_.get())->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

bool start_metrics(HttpServer& s, const std::string& where, const std::function<Runtime&()>& rt, std::string& err) {
  return s.start(
      where, "--metrics",
      [&](void* p) {
        auto* srv = static_cast<httplib::Server*>(p);
        srv->Get("/metrics", [rt](const httplib::Request&, httplib::Response& res) {
          res.set_content(prometheus_text(rt()), "text/plain; version=0.0.4; charset=utf-8");
        });
        srv->Get("/", [](const httplib::Request&, httplib::Response& res) {
          res.set_content("<html><body><a href=\"/metrics\">/metrics</a></body></html>\n", "text/html");
        });
      },
      err);
}

}  // namespace shoal::tool
