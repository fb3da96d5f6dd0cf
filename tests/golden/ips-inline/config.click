// An inline IPS (tests/golden/make_inputs.py says what the packets are):
// packets a drop rule drops leave through IDSMatcher's drops (no output 1),
// the rest are forwarded, normalized to the bytes that were inspected.
FromDump($IN, STOP true)
  -> FlowIPManager
  -> ips :: IDSMatcher(RULES tests/golden/ips-inline/inline.rules, IPS true, QUIET true, ENGINE builtin)
  -> ToDump($OUT);
