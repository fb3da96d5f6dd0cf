#include "shoal/offload/mirror.hh"

namespace shoal::offload {

bool TableMirror::sync(Launch& L, std::shared_ptr<const void> version, const std::vector<Piece>& pieces,
                       std::string& err) {
  if (!copy_ || copy_->version != version) {
    auto make = [&]() -> std::shared_ptr<Copy> {
      auto c = std::make_shared<Copy>();
      c->version = version;
      for (const Piece& pc : pieces) {
        auto b = pc.bytes ? upload_shared(L.device, pc.src, pc.bytes, err) : upload_shared(L.device, nullptr, 8, err);
        if (!b) return nullptr;
        c->bufs.push_back(std::move(b));
      }
      return c;
    };
    bool made;
    auto c = shared_device_copy<Copy>(L.device.get(), version.get(), make, made);
    if (!c) return false;
    copy_ = std::move(c);
    if (made) uploads_.add();
  }
  L.keep(copy_);
  return true;
}

}  // namespace shoal::offload
