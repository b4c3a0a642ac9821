-- The ranking of a fleet as summary.html shows it (`pioscope fleet`): four queries over the
-- fleet tables as the views `jobs` and `findings` (docs/FORMAT.md "Fleet tables"). pioscope
-- runs them with DuckDB over one fleet directory (fleet/ranking.py); the same text runs on
-- Spark over a whole archive, one statement per "-- name:" line, after
--   spark.read.parquet("fleet-*/jobs.parquet").createOrReplaceTempView("jobs")
--   spark.read.parquet("fleet-*/findings.parquet").createOrReplaceTempView("findings")
-- Every statement aggregates, keeps a top-N or joins against a per-rule aggregate, so none
-- holds the fleet in memory.

-- name: totals
-- The fleet's totals: inputs, the ones that failed, findings, bytes, I/O and wall time.
SELECT count(*) AS inputs,
       count(error) AS failed,
       (SELECT count(*) FROM findings) AS findings,
       coalesce(sum(bytes_read), 0) AS bytes_read,
       coalesce(sum(bytes_written), 0) AS bytes_written,
       coalesce(sum(io_ns), 0) AS io_ns,
       coalesce(sum(wall_ns), 0) AS wall_ns
FROM jobs;

-- name: jobs
-- The 100 profiled jobs with the most I/O time (summed over ranks); ties by input.
SELECT input, kind, job, ranks, duration_ns, io_ns, io_share, bytes_read, bytes_written,
       findings_judged, top_finding, top_finding_cost_ns
FROM jobs
WHERE error IS NULL
ORDER BY io_ns DESC, input
LIMIT 100;

-- name: rules
-- Every finding rule by its cost summed over the fleet, costliest first (ties by rule id),
-- with the jobs it was found in, its findings by severity and its costliest finding (ties:
-- the first input by name, then that job's first finding). The costliest finding is looked
-- for among the rows that cost the rule's maximum, not by sorting every finding.
WITH per_rule AS (
  SELECT finding,
         count(DISTINCT input) AS jobs,
         count(*) AS findings,
         sum(CASE WHEN severity = 'high' THEN 1 ELSE 0 END) AS high,
         sum(CASE WHEN severity = 'medium' THEN 1 ELSE 0 END) AS medium,
         sum(CASE WHEN severity = 'low' THEN 1 ELSE 0 END) AS low,
         sum(cost_ns) AS cost_ns,
         max(cost_ns) AS worst_cost_ns
  FROM findings
  GROUP BY finding
),
worst AS (
  SELECT f.finding, f.input AS worst_input, f.title AS worst_title,
         row_number() OVER (PARTITION BY f.finding ORDER BY f.input, f.position) AS n
  FROM findings f
  JOIN per_rule r ON f.finding = r.finding AND f.cost_ns = r.worst_cost_ns
)
SELECT r.finding, r.jobs, r.findings, r.high, r.medium, r.low, r.cost_ns, r.worst_cost_ns,
       w.worst_input, w.worst_title
FROM per_rule r
JOIN worst w ON w.finding = r.finding AND w.n = 1
ORDER BY r.cost_ns DESC, r.finding;

-- name: errors
-- The first 100 inputs that failed, by input, with their error.
SELECT input, kind, error
FROM jobs
WHERE error IS NOT NULL
ORDER BY input
LIMIT 100;
