// `shoal run --web [ADDR:]PORT`: a live dashboard of the running graph,
// served by cpp-httplib while the run lasts. The page (web/dashboard.html,
// built into the binary) draws the graph from /api/graph and refreshes it
// from /api/stats every second; /api/handlers lists an element's handlers
// and /api/write writes one, when the run allows it (--web-writes).
//
//   GET  /                       the page
//   GET  /api/graph              elements (name, class, ports, column, row) and connections
//   GET  /api/stats              the statistics `--stats json` prints, now, with
//                                each element's packets out by port ("outputs")
//   GET  /api/handlers?element=E E's handlers: name, readable, writable, value
//                                (&numeric=1: the numeric values only)
//   POST /api/write              element=E&handler=H&value=V: 200 and the result,
//                                403 when writes are off, 400 when the write fails
#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <functional>
#include <map>
#include <vector>

#include "common.hh"
#include "shoal/core/element.hh"
#include "shoal/offload/services.hh"
#include "shoal_dashboard.hh"

namespace shoal::tool {

nlohmann::json graph_json(Runtime& rt) {
  Router& r0 = rt.router(0);
  size_t n = r0.size();
  std::map<const Element*, size_t> index;
  for (size_t i = 0; i < n; ++i) index[r0.element(i)] = i;
  // connections, by output port
  std::vector<std::vector<size_t>> succ(n), pred(n);
  nlohmann::json edges = nlohmann::json::array();
  for (size_t i = 0; i < n; ++i) {
    Element* e = r0.element(i);
    for (int p = 0; p < e->noutputs(); ++p) {
      const Element::PortRef& to = e->output(p);
      auto it = to.e ? index.find(to.e) : index.end();
      if (it == index.end()) continue;
      succ[i].push_back(it->second);
      pred[it->second].push_back(i);
      edges.push_back({{"from", e->name()}, {"out", p}, {"to", to.e->name()}, {"in", to.port}});
    }
  }
  // Columns: depth-first from the sources (elements nothing feeds), then
  // from what is left in text order; an edge to an element still on the
  // walk's stack closes a cycle and is left out of the longest paths.
  std::vector<int> state(n, 0);  // 0 new, 1 on the stack, 2 done
  std::vector<size_t> order;     // reverse post-order: a topological order of the kept edges
  std::vector<std::vector<bool>> back(n);
  for (size_t i = 0; i < n; ++i) back[i].assign(succ[i].size(), false);
  auto walk = [&](size_t root) {
    std::vector<std::pair<size_t, size_t>> stack{{root, 0}};
    state[root] = 1;
    while (!stack.empty()) {
      auto& [v, k] = stack.back();
      if (k < succ[v].size()) {
        size_t w = succ[v][k];
        if (state[w] == 1) back[v][k] = true;
        ++k;
        if (state[w] == 0) {
          state[w] = 1;
          stack.push_back({w, 0});
        }
      } else {
        state[v] = 2;
        order.push_back(v);
        stack.pop_back();
      }
    }
  };
  for (size_t i = 0; i < n; ++i)
    if (pred[i].empty() && state[i] == 0) walk(i);
  for (size_t i = 0; i < n; ++i)
    if (state[i] == 0) walk(i);
  std::reverse(order.begin(), order.end());
  std::vector<int> col(n, 0);
  for (size_t v : order)
    for (size_t k = 0; k < succ[v].size(); ++k)
      if (!back[v][k]) col[succ[v][k]] = std::max(col[succ[v][k]], col[v] + 1);
  // Rows: in each column, by the mean row of the neighbours in the column
  // before (then after), a few sweeps; text order first.
  int ncols = n ? *std::max_element(col.begin(), col.end()) + 1 : 0;
  std::vector<std::vector<size_t>> cols(static_cast<size_t>(ncols));
  for (size_t i = 0; i < n; ++i) cols[size_t(col[i])].push_back(i);
  std::vector<double> row(n, 0);
  auto number = [&] {
    for (auto& c : cols)
      for (size_t r = 0; r < c.size(); ++r) row[c[r]] = double(r);
  };
  number();
  auto sweep = [&](int c, const std::vector<std::vector<size_t>>& nb) {
    auto& v = cols[size_t(c)];
    std::vector<std::pair<double, size_t>> key;
    for (size_t r = 0; r < v.size(); ++r) {
      double sum = 0;
      int cnt = 0;
      for (size_t u : nb[v[r]])
        if (std::abs(col[u] - c) == 1) sum += row[u], ++cnt;
      key.push_back({cnt ? sum / cnt : row[v[r]], v[r]});
    }
    std::stable_sort(key.begin(), key.end(), [](auto& a, auto& b) { return a.first < b.first; });
    for (size_t r = 0; r < v.size(); ++r) v[r] = key[r].second, row[v[r]] = double(r);
  };
  for (int pass = 0; pass < 4; ++pass) {
    for (int c = 1; c < ncols; ++c) sweep(c, pred);
    for (int c = ncols - 2; c >= 0; --c) sweep(c, succ);
  }
  nlohmann::json nodes = nlohmann::json::array();
  for (size_t i = 0; i < n; ++i) {
    Element* e = r0.element(i);
    nodes.push_back({{"name", e->name()},
                     {"class", std::string(e->class_name())},
                     {"config", e->config_string()},
                     {"inputs", e->ninputs()},
                     {"outputs", e->noutputs()},
                     {"column", col[i]},
                     {"row", int(row[i])}});
  }
  return {{"elements", nodes}, {"connections", edges}, {"columns", ncols}};
}

namespace {

void json_reply(httplib::Response& res, const nlohmann::json& j, int status = 200) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(j.dump(), "application/json");
}

Element* find_element(Runtime& rt, const std::string& name) {
  Router& r0 = rt.router(0);
  for (size_t i = 0; i < r0.size(); ++i)
    if (r0.element(i)->name() == name) return r0.element(i);
  return nullptr;
}

}  // namespace

bool start_web(HttpServer& s, const std::string& where, const std::function<Runtime&()>& rt, bool writes,
               std::string& err) {
  return s.start(
      where, "--web",
      [&](void* p) {
        auto* srv = static_cast<httplib::Server*>(p);
        srv->Get("/", [](const httplib::Request&, httplib::Response& res) {
          res.set_content(std::string(kDashboardPage), "text/html; charset=utf-8");
        });
        srv->Get("/api/graph", [rt, writes](const httplib::Request&, httplib::Response& res) {
          Runtime& now = rt();
          nlohmann::json j = graph_json(now);
          j["writes"] = writes;
          j["device"] = offload::services(now).device_kind();
          j["threads"] = now.nworkers();
          j["reloads"] = now.swaps();
          json_reply(res, j);
        });
        srv->Get("/api/stats", [rt](const httplib::Request&, httplib::Response& res) {
          Runtime& now = rt();
          nlohmann::json j = stats_json(now);
          j["reloads"] = now.swaps();
          // the drop reasons that are losses (Shoal could not carry the
          // packets), apart from the configuration's own discards
          nlohmann::json loss = nlohmann::json::object();
          Router& r0 = now.router(0);
          for (size_t i = 0; i < r0.size(); ++i)
            for (size_t k = 0; k < r0.element(i)->drop_reasons().size(); ++k)
              if (r0.element(i)->drop_reasons()[k].loss)
                loss[r0.element(i)->name()].push_back(r0.element(i)->drop_reasons()[k].name);
          j["loss_reasons"] = loss;
          // packets that left by each output port, pushed or pulled, summed
          // over workers: every element's rate, counters or not
          nlohmann::json outs = nlohmann::json::object();
          for (size_t i = 0; i < r0.size(); ++i) {
            nlohmann::json ports = nlohmann::json::array();
            for (int p = 0; p < r0.element(i)->noutputs(); ++p) {
              uint64_t n = 0;
              for (int w = 0; w < now.nworkers(); ++w) n += now.router(w).element(i)->output_count(p);
              ports.push_back(n);
            }
            if (!ports.empty()) outs[r0.element(i)->name()] = ports;
          }
          j["outputs"] = outs;
          json_reply(res, j);
        });
        srv->Get("/api/handlers", [rt](const httplib::Request& req, httplib::Response& res) {
          Runtime& now = rt();
          std::string name = req.get_param_value("element");
          Element* e = find_element(now, name);
          if (!e) return json_reply(res, {{"error", fmt::format("no element '{}'", name)}}, 404);
          // numeric=1 (the page's refreshes): the numbers only, not the
          // listings (a flow table's 'flows' can be megabytes); a listing
          // longer than 64 KiB is cut, and says where the rest is.
          bool numeric_only = req.get_param_value("numeric") == "1";
          nlohmann::json hs = nlohmann::json::array();
          for (const Handler& hd : e->handlers()) {
            if (hd.hidden) continue;
            nlohmann::json h = {{"name", hd.name}, {"read", bool(hd.read)}, {"write", bool(hd.write)}};
            std::string v, why;
            if (hd.read && (hd.numeric || !numeric_only) && now.read_handler(name + "." + hd.name, v, why)) {
              if (v.size() > 65536)
                v = v.substr(0, 65536) +
                    fmt::format("\n... ({} bytes in all: shoal ctl read {}.{})", v.size(), name, hd.name);
              h["value"] = v;
            }
            hs.push_back(h);
          }
          json_reply(res, {{"element", name}, {"class", std::string(e->class_name())}, {"handlers", hs}});
        });
        srv->Post("/api/write", [rt, writes](const httplib::Request& req, httplib::Response& res) {
          if (!writes)
            return json_reply(res, {{"error", "handler writes are off (shoal run --web-writes turns them on)"}}, 403);
          std::string el = req.get_param_value("element"), hd = req.get_param_value("handler");
          std::string why;
          if (!find_element(rt(), el)) return json_reply(res, {{"error", fmt::format("no element '{}'", el)}}, 404);
          if (!rt().write_handler(el + "." + hd, req.get_param_value("value"), why))
            return json_reply(res, {{"error", why}}, 400);
          json_reply(res, {{"ok", true}});
        });
      },
      err);
}

}  // namespace shoal::tool
