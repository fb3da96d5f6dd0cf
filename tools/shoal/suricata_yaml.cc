#include "suricata_yaml.hh"

#include <fmt/format.h>
#include <yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "shoal/ids/dataset.hh"

namespace shoal::tool {

const YamlNode* YamlNode::get(const std::string& key) const {
  if (kind != Map) return nullptr;
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) return &seq[i];
  return nullptr;
}

bool YamlNode::yes() const {
  return kind == Scalar && (value == "yes" || value == "true" || value == "on" || value == "1");
}

namespace {

void convert(yaml_document_t* doc, yaml_node_t* n, YamlNode& out, int depth) {
  if (!n || depth > 64) return;
  switch (n->type) {
    case YAML_SCALAR_NODE:
      out.kind = YamlNode::Scalar;
      out.value.assign(reinterpret_cast<const char*>(n->data.scalar.value), n->data.scalar.length);
      break;
    case YAML_SEQUENCE_NODE:
      out.kind = YamlNode::Seq;
      for (yaml_node_item_t* i = n->data.sequence.items.start; i < n->data.sequence.items.top; ++i) {
        out.seq.emplace_back();
        convert(doc, yaml_document_get_node(doc, *i), out.seq.back(), depth + 1);
      }
      break;
    case YAML_MAPPING_NODE:
      out.kind = YamlNode::Map;
      for (yaml_node_pair_t* p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; ++p) {
        YamlNode k;
        convert(doc, yaml_document_get_node(doc, p->key), k, depth + 1);
        out.keys.push_back(k.value);
        out.seq.emplace_back();
        convert(doc, yaml_document_get_node(doc, p->value), out.seq.back(), depth + 1);
      }
      break;
    default: break;
  }
}

}  // namespace

bool load_yaml(const std::string& path, YamlNode& out, std::string& err) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return err = fmt::format("{}: cannot read it", path), false;
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) return err = "libyaml: cannot make a parser", false;
  yaml_parser_set_input_file(&parser, f.get());
  yaml_document_t doc;
  bool ok = yaml_parser_load(&parser, &doc);
  if (!ok) {
    err = fmt::format("{}:{}: {}", path, parser.problem_mark.line + 1, parser.problem ? parser.problem : "bad YAML");
  } else {
    out = YamlNode();
    convert(&doc, yaml_document_get_root_node(&doc), out, 0);
    yaml_document_delete(&doc);
  }
  yaml_parser_delete(&parser);
  return ok;
}

SuricataSettings suricata_settings(const YamlNode& root) {
  SuricataSettings s;
  if (const YamlNode* order = root.get("action-order"); order && order->kind == YamlNode::Seq)
    for (const YamlNode& a : order->seq) s.action_order.push_back(a.value);
  // exception policies: the midstream one, or the master switch
  if (const YamlNode* master = root.get("exception-policy"); master && master->kind == YamlNode::Scalar)
    s.midstream_policy = s.exception_policy = master->value;
  if (const YamlNode* al = root.get("app-layer"))
    if (const YamlNode* e = al->get("error-policy"); e && e->kind == YamlNode::Scalar) s.app_error_policy = e->value;
  // host-os-policy: each policy's addresses
  if (const YamlNode* h = root.get("host-os-policy"); h && h->kind == YamlNode::Map)
    for (size_t i = 0; i < h->keys.size() && i < h->seq.size(); ++i) {
      std::string nets;
      const YamlNode& v = h->seq[i];
      if (v.kind == YamlNode::Seq) {
        for (const YamlNode& x : v.seq)
          if (x.kind == YamlNode::Scalar && !x.value.empty()) nets += " " + x.value;
      } else if (v.kind == YamlNode::Scalar && !v.value.empty()) {
        nets += " " + v.value;
      }
      if (!nets.empty()) s.host_os_policy += (s.host_os_policy.empty() ? "" : "; ") + h->keys[i] + nets;
    }
  if (const YamlNode* stream = root.get("stream")) {
    if (const YamlNode* m = stream->get("midstream-policy"); m && m->kind == YamlNode::Scalar)
      s.midstream_policy = m->value;
    if (const YamlNode* m = stream->get("midstream"); m && m->kind == YamlNode::Scalar)
      s.midstream = m->yes() ? "true" : "false";
    if (const YamlNode* i = stream->get("inline"); i && i->kind == YamlNode::Scalar)
      s.stream_inline = i->value == "auto" ? "auto" : i->yes() ? "true" : "false";
    if (const YamlNode* a = stream->get("async-oneside"); a && a->kind == YamlNode::Scalar)
      s.async_oneside = a->yes() ? "true" : "false";
    if (const YamlNode* d = stream->get("drop-invalid"); d && d->kind == YamlNode::Scalar)
      s.drop_invalid = d->yes() ? "true" : "false";
    if (const YamlNode* r = stream->get("reassembly"))
      if (const YamlNode* d = r->get("depth"); d && d->kind == YamlNode::Scalar) {
        uint64_t n = 0;
        if (ids::parse_suricata_size(d->value, n)) s.stream_depth = std::to_string(n);
      }
  }
  // packet-alert-max: 1-255 (Suricata keeps its default, 15, for another value)
  if (const YamlNode* m = root.get("packet-alert-max"); m && m->kind == YamlNode::Scalar) {
    int n = 0;
    auto [end, ec] = std::from_chars(m->value.data(), m->value.data() + m->value.size(), n);
    if (ec == std::errc() && end == m->value.data() + m->value.size() && n >= 1 && n <= 255) s.packet_alert_max = n;
  }
  if (const YamlNode* d = root.get("detect")) {
    if (const YamlNode* g = d->get("guess-applayer-tx"); g && g->kind == YamlNode::Scalar)
      s.guess_applayer_tx = g->yes();
    if (const YamlNode* m = d->get("stream-tx-log-limit"); m && m->kind == YamlNode::Scalar) {
      int n = 0;
      auto [end, ec] = std::from_chars(m->value.data(), m->value.data() + m->value.size(), n);
      if (ec == std::errc() && end == m->value.data() + m->value.size() && n >= 1 && n <= 255)
        s.stream_tx_log_limit = n;
    }
  }
  if (const YamlNode* v = root.get("vlan"))
    if (const YamlNode* t = v->get("use-for-tracking"); t && t->kind == YamlNode::Scalar)
      s.vlan_tracking = t->yes() ? "true" : "false";
  if (const YamlNode* al = root.get("app-layer"))
    if (const YamlNode* pr = al->get("protocols"))
      if (const YamlNode* ssh = pr->get("ssh"))
        if (const YamlNode* e = ssh->get("encryption-handling"); e && e->kind == YamlNode::Scalar)
          s.ssh_encryption = e->value;
  // outputs: a list of one-key maps; eve-log's types: the same; alert's options
  if (const YamlNode* outputs = root.get("outputs"); outputs && outputs->kind == YamlNode::Seq)
    for (const YamlNode& o : outputs->seq) {
      const YamlNode* eve = o.get("eve-log");
      if (!eve || (eve->get("enabled") && !eve->get("enabled")->yes())) continue;
      if (const YamlNode* eth = eve->get("ethernet")) s.eve_ethernet = eth->yes();
      if (const YamlNode* pf = eve->get("pcap-file")) s.eve_pcap_file |= pf->yes();
      SuricataSettings::EveLog& log = s.eve_logs.emplace_back();
      if (const YamlNode* f = eve->get("filename"); f && f->kind == YamlNode::Scalar) log.filename = f->value;
      if (const YamlNode* types = eve->get("types"); types && types->kind == YamlNode::Seq)
        for (const YamlNode& t : types->seq) {
          // a type is a word (- http) or a map of its options (- http: {...})
          const std::string& name = t.kind == YamlNode::Scalar ? t.value : t.keys.empty() ? t.value : t.keys[0];
          static const char* const kWritten[] = {"alert", "drop",    "flow",  "http",    "files",
                                                 "dns",   "tls",     "sip",   "ssh",     "ftp",
                                                 "smtp",  "anomaly", "stats", "netflow", "metadata"};
          if (std::find(std::begin(kWritten), std::end(kWritten), name) != std::end(kWritten) &&
              std::find(log.types.begin(), log.types.end(), name) == log.types.end())
            log.types.push_back(name);
          if (const YamlNode* fl = t.get("flow"); fl && fl->get("exception-policy"))
            s.eve_exception_policy = fl->get("exception-policy")->yes();
          // files' force-hash: [md5, sha1, sha256] (a list, or one word)
          if (const YamlNode* f = t.get("files"); f && f->get("force-hash")) {
            const YamlNode* h = f->get("force-hash");
            std::vector<std::string> words;
            if (h->kind == YamlNode::Seq)
              for (const YamlNode& x : h->seq) words.push_back(x.value);
            else
              words.push_back(h->value);
            for (const std::string& w : words)
              if ((w == "md5" || w == "sha1" || w == "sha256") &&
                  std::find(s.file_hashes.begin(), s.file_hashes.end(), w) == s.file_hashes.end())
                s.file_hashes.push_back(w);
          }
          if (const YamlNode* an = t.get("anomaly"))
            if (const YamlNode* ty = an->get("types"))
              for (auto [name, flag] : {std::pair{"stream", &s.eve_anomaly_stream}, {"decode", &s.eve_anomaly_decode}})
                if (const YamlNode* v = ty->get(name)) *flag = v->yes();
          if (const YamlNode* d = t.get("drop")) {
            if (const YamlNode* f = d->get("flows"); f && f->kind == YamlNode::Scalar) s.drop_flows = f->value;
            if (const YamlNode* al = d->get("alerts")) s.drop_alerts = al->yes();
          }
          if (const YamlNode* dns = t.get("dns"); dns && dns->get("version"))
            s.dns_version = std::atoi(dns->get("version")->value.c_str());
          if (const YamlNode* alert = t.get("alert")) {
            if (const YamlNode* v = alert->get("verdict")) s.eve_verdict = v->yes();
            if (const YamlNode* v = alert->get("packet")) s.eve_packet = v->yes();
            if (const YamlNode* v = alert->get("payload")) s.eve_payload = v->yes();
            if (const YamlNode* v = alert->get("payload-printable")) s.eve_payload_printable = v->yes();
            if (const YamlNode* v = alert->get("tagged-packets")) s.eve_tagged_packets = v->yes();
            if (const YamlNode* x = alert->get("xff"); x && x->get("enabled") && x->get("enabled")->yes()) {
              const YamlNode* m = x->get("mode");
              s.xff_mode = m ? m->value : "extra-data";
              if (const YamlNode* d = x->get("deployment")) s.xff_deployment = d->value;
              if (const YamlNode* h = x->get("header")) s.xff_header = h->value;
            }
          }
        }
    }
  return s;
}

}  // namespace shoal::tool
