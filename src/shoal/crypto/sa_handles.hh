// Handles for SAs carried in a packet's annotations: Click's IPsec pieces
// (RadixIPsecLookup, IPsecESPEncap, IPsecAES, IPsecAuthHMACSHA1,
// IPsecESPUnencap) pass the SA a packet belongs to from the route table to
// the elements after it, as Click does with its SA pointer annotation. A
// handle is a 32-bit number (0: none) that stays valid for the life of the
// process: an SA once given a handle is kept, so a packet still in flight
// after its route changed finds the SA it was routed with.
#pragma once
#include <cstdint>
#include <memory>

#include "shoal/crypto/sadb.hh"

namespace shoal::crypto {

// The SA's handle, given when first asked; 0 when the table is full
// (kMaxSaHandles SAs).
uint32_t sa_handle(const std::shared_ptr<SA>& sa);
// The SA a handle stands for; nullptr for 0 or a handle never given.
SA* sa_by_handle(uint32_t h);
constexpr uint32_t kMaxSaHandles = 1u << 20;

}  // namespace shoal::crypto
