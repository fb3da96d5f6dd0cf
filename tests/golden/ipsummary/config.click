FromDump($IN, STOP true) -> ToIPSummaryDump($OUT, CONTENTS timestamp ip_src sport ip_dst dport ip_proto ip_len ip_ttl ip_id ip_frag ip_fragoff tcp_seq tcp_flags payload_len);
