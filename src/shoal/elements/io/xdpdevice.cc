#include "shoal/elements/io/xdpdevice.hh"

#include <fmt/format.h>

#include "shoal/core/graph.hh"
#include "shoal/core/worker.hh"

namespace shoal {

void XdpDeviceArgs::read(Args& a) {
  std::string mode = "auto", zc = "auto";
  a.read_mp("DEVNAME", opt.dev).read("QUEUE", opt.queue).read("MODE", mode).read("ZEROCOPY", zc);
  a.read("FRAMES", opt.frames).read("FRAME_SIZE", opt.frame_size).read("RING_SIZE", opt.ring_size);
  if (mode == "auto")
    opt.mode = io::XdpMode::Auto;
  else if (mode == "native" || mode == "drv")
    opt.mode = io::XdpMode::Native;
  else if (mode == "generic" || mode == "skb")
    opt.mode = io::XdpMode::Generic;
  else
    a.fail(fmt::format("MODE must be auto, native or generic, not '{}'", mode));
  bool b = false;
  if (zc == "auto")
    opt.copy = io::XdpCopy::Auto;
  else if (parse_bool(zc, b))
    opt.copy = b ? io::XdpCopy::ZeroCopy : io::XdpCopy::Copy;
  else
    a.fail(fmt::format("ZEROCOPY must be auto, true or false, not '{}'", zc));
  auto pow2 = [](uint32_t x) { return x && !(x & (x - 1)); };
  if (opt.frame_size != 2048 && opt.frame_size != 4096) a.fail("FRAME_SIZE must be 2048 or 4096");
  if (!pow2(opt.frames) || opt.frames < 64) a.fail("FRAMES must be a power of two, at least 64");
  if (!pow2(opt.ring_size) || opt.ring_size < 32) a.fail("RING_SIZE must be a power of two, at least 32");
  if (opt.ring_size > opt.frames / 2) a.fail("RING_SIZE must be at most FRAMES / 2");
}

std::shared_ptr<io::XskPort> XdpDeviceArgs::open(Element* e, bool rx) const {
  io::XdpOptions o = opt;
  o.queue += uint32_t(e->worker().id());
  for (size_t i = 0; !rx && i < e->router().size(); ++i)
    if (auto* r = dynamic_cast<XdpReceiver*>(e->router().element(i)); r && r->xdp_dev() == opt.dev) rx = true;
  return io::XskPort::acquire(fmt::format("{}({})", e->class_name(), opt.dev), o, rx);
}

}  // namespace shoal
