// A rate-limited source watched by a Script: every 200 ms print the count
// and rate; after five reports, stop.
RatedSource(RATE 1000) -> c :: Counter -> Discard;
Script(set n 0,
       label again,
       wait 200ms,
       set n $(add $n 1),
       print "report" $n ":" $(c.count) "packets," $(c.rate) "pps",
       goto again $(lt $n 5),
       stop);
