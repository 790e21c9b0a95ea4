# The flush-cost benchmark's records (MSHARE-BENCH-FLUSH lines of
# kernel/selftests/bench/mshare_flush, slurped with jq -s) as the tables of
# docs/results/bench-flush-*.md. $head is the text above the tables.
def us: (. / 1000 * 10 | round / 10);
def ratio(a; b): if b > 0 then (a / b * 100 | round / 100) else "-" end;
. as $r
| (["unmap", "protect"] | map(select(. as $o | $r | any(.op == $o)))) as $ops
| [$head,
   ($ops[] as $op
    | ($r | map(select(.op == $op))) as $p
    | ($p | map(select(.way == "mshare" and .sharers == 1))[0].median_ns // 0) as $one
    | "",
      "## \($op) of 2 MiB",
      "",
      "| sharers | mshare median | mshare p90 | plain median | plain p90 | plain / mshare | mshare / mshare at 1 sharer |",
      "|---:|---:|---:|---:|---:|---:|---:|",
      ($p | map(.sharers) | unique[] as $n
       | ($p | map(select(.sharers == $n and .way == "mshare"))[0]) as $m
       | ($p | map(select(.sharers == $n and .way == "plain"))[0]) as $q
       | "| \($n) | \($m.median_ns // 0 | us) us | \($m.p90_ns // 0 | us) us | \($q.median_ns // 0 | us) us | \($q.p90_ns // 0 | us) us | \(ratio($q.median_ns // 0; $m.median_ns // 0)) | \(ratio($m.median_ns // 0; $one)) |"))]
| join("\n")
