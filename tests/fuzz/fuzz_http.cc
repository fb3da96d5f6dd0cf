// libFuzzer: arbitrary bytes as the two directions of an HTTP connection,
// cut into chunks the input chooses, through libhtp and Shoal's transaction
// layer (flow::HttpConn), with gaps. No crash, no leak (ASan), what is
// kept stays within the body limits, and a form's uploaded files that came
// whole have their digests.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "shoal/flow/http.hh"

using namespace shoal::flow;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* p, size_t n) {
  HttpConfig cfg;
  cfg.request_body_limit = 256;
  cfg.response_body_limit = 512;
  cfg.file_digests = kDigestAll;
  HttpCounters counters;
  {
    HttpConn conn(cfg, counters, [&](HttpTx& tx, uint8_t progress) {
      if (tx.request_body.size() > cfg.request_body_limit || tx.response_body.size() > cfg.response_body_limit)
        std::abort();
      if (progress && !(tx.progress & progress)) std::abort();  // the bit announced is set
      if (!progress && !tx.events) std::abort();                // (0: new events)
      if (const HttpForm* f = tx.form.get()) {
        size_t kept = 0;
        for (const std::string& d : f->mime.file_data()) kept += d.size();
        if (kept > cfg.request_body_limit) std::abort();  // all files together within the limit
        for (size_t k = 0; k < f->mime.files().size(); ++k) {
          const MimeFile& m = f->mime.files()[k];
          if (f->mime.file_data()[k].size() > cfg.request_body_limit || (f->whole(k) && m.digests.md5().empty()))
            std::abort();
        }
      }
    });
    size_t i = 0;
    while (i < n) {
      // a chunk header: direction (bit 7), gap (bit 6), length (bits 0-5, x8)
      uint8_t h = p[i++];
      uint8_t dir = h >> 7;
      if (h & 0x40) {
        conn.gap(dir);
        continue;
      }
      size_t len = std::min<size_t>(size_t(h & 0x3f) * 8 + 1, n - i);
      (void)http_detect(dir, p + i, uint32_t(len));
      conn.data(dir, p + i, uint32_t(len), uint64_t(i) * 1000);
      conn.release_done();
      i += len;
    }
    conn.close(0);
  }
  return 0;
}
