-- What a canned report covers where its parameters leave it unsaid: the shell prints this on
-- stderr ("REPORT: NOTE") before the report's rows, one line; NULL: nothing to say. The statements
-- run in order and the first text wins; one that fails says nothing (the report then says what
-- failed; a note reading `other` cannot run without it). empty_report.sql explains empty ones.
WITH model_cover(note) AS (
  -- (The counted ops' names, work_name, only for the unmodeled ones, and only when the note is
  -- said: the share alone needs none, and naming every op was most of the `ops` report's work.)
  -- (The event row is read for mfu's steps and rank only: perf_rows' uids are the events'.)
  WITH c AS MATERIALIZED (
             SELECT p.uid, p.gpu_ns, p.flops IS NOT NULL AS modeled
             FROM perf_rows('main') p
             WHERE p.counted = 1 AND p.gpu_ns > 0
               AND (@report IS NOT 'mfu'
                    OR EXISTS (SELECT 1 FROM event o WHERE o.uid = p.uid AND o.step IS NOT NULL
                                 AND (@rank IS NULL OR o.trace IN (SELECT id FROM trace WHERE rank = @rank))))),
  total AS (SELECT 100.0 * total(gpu_ns) FILTER (WHERE modeled) / total(gpu_ns) AS pct, total(gpu_ns) AS ns FROM c),
  gap AS (SELECT work_name(uid, 'main') AS name, total(gpu_ns) AS ns, min(uid) AS uid FROM c WHERE NOT modeled
          GROUP BY name ORDER BY total(gpu_ns) DESC LIMIT 1)
  SELECT CASE WHEN t.pct < 50 THEN (
           SELECT printf('%.0f%% of the GPU time ran in ops with a FLOPs model; the rest adds no FLOPs to %s '
                         || '(the largest part: %s, %.0f%%%s)',
                         t.pct, CASE @report WHEN 'mfu' THEN 'MFU' ELSE 'the TFLOP/s figures' END, g.name,
                         100.0 * g.ns / t.ns,
                         coalesce((SELECT ', no model: ' || model_gap(e.name, e.args) FROM event e WHERE e.uid = g.uid),
                                  ''))
           FROM gap g) END
  FROM total t),
family_gap(note) AS (
  WITH fam(f) AS (SELECT CASE @report WHEN 'gemm' THEN 'GEMM' WHEN 'sdpa' THEN 'SDPA' WHEN 'conv' THEN 'CONV' END),
  left_out AS (SELECT o.uid, o.name, p.gpu_ns FROM perf_rows('main') p CROSS JOIN event o ON o.uid = p.uid, fam
               WHERE p.counted = 1 AND p.gpu_ns > 0 AND p.flops IS NULL AND op_category(o.name) LIKE fam.f || '%'
                 AND o.name LIKE 'aten::%'),
  top AS (SELECT name, min(uid) AS uid FROM left_out GROUP BY name ORDER BY total(gpu_ns) DESC LIMIT 1)
  -- (Whether the sheet has rows, asked only when an op was left out, of the sheet's ungrouped
  -- rows, which stops at the first; `+` keeps SQLite from indexing all of them to answer it.)
  SELECT CASE WHEN EXISTS (SELECT 1 FROM op_sheet_work s WHERE +s.family = fam.f) THEN
           printf('not listed: %d %s op instance(s) with %.3f ms of GPU time and no FLOPs model (the largest part: %s%s)',
                  (SELECT count(*) FROM left_out), fam.f, (SELECT total(gpu_ns) FROM left_out) / 1e6, top.name,
                  coalesce((SELECT ', no model: ' || model_gap(e.name, e.args) FROM event e WHERE e.uid = top.uid), ''))
         END
  FROM fam, top)
SELECT CASE @report
  -- critical_path: the rank, the annotation occurrence and the path against its window, and
  -- whether the path starts at a wait that weighs nothing: a blocking call whose GPU work is not
  -- in the graph (launched before the window, or no cuda_sync event links the two), so the path
  -- starts where that wait ended. Then the stream waits no sync event places (waits_note): how
  -- many, how many inferred, and which could not be.
  WHEN 'critical_path' THEN (
    WITH t AS (SELECT id, rank FROM trace WHERE id = (SELECT min(id) FROM trace WHERE @rank IS NULL OR rank = @rank)),
    p AS MATERIALIZED (
      SELECT t.id, t.rank, c.step, c.type, c.dur, c.from_uid, c.from_end, c.to_uid, c.to_end, c.window_uid,
             c.window_ts, c.window_end, c.waits_note
      FROM t, critical_path(coalesce(@annotation, 'ProfilerStep'), coalesce(@instance, 0), t.id) c),
    s AS (SELECT id, rank, window_uid, window_end - window_ts AS window_ns, total(dur) AS path_ns,
                 max(waits_note) AS waits_note FROM p),
    w AS (SELECT e.name, e.dur FROM p JOIN event e ON e.uid = p.from_uid
          WHERE p.step = 0 AND p.type = 'critical_path_operator' AND p.dur = 0 AND p.from_end = 0
            AND p.to_uid = p.from_uid AND p.to_end = 1 AND e.kind IN ('runtime', 'driver') AND e.dur > 0)
    SELECT printf('%s, %s, window %.3f ms, path %.3f ms (%.0f%% of the window)',
                  CASE WHEN s.rank IS NULL THEN 'trace ' || s.id ELSE 'rank ' || s.rank END,
                  CASE WHEN s.window_uid IS NULL THEN 'the whole trace'
                       ELSE (SELECT name || ' (instance ' || coalesce(@instance, 0) ||
                                    iif(name = coalesce(@annotation, 'ProfilerStep'), '',
                                        ' of ''' || coalesce(@annotation, 'ProfilerStep') || '''') || ')'
                             FROM event WHERE uid = s.window_uid) END,
                  s.window_ns / 1e6, s.path_ns / 1e6, 100.0 * s.path_ns / max(s.window_ns, 1)) ||
           coalesce((SELECT printf('; it starts at %s (uid %d), a wait of %.3f ms counted as 0: %s', w.name,
                                   (SELECT from_uid FROM p WHERE step = 0), w.dur / 1e6,
                                   CASE WHEN EXISTS (SELECT 1 FROM event WHERE trace = s.id AND kind = 'sync')
                                        THEN 'the GPU work it waited for was launched before the window'
                                        ELSE 'no cuda_sync event links it to the GPU work it waited for' END)
                     FROM w), '') ||
           coalesce('; ' || s.waits_note, '')
    FROM s WHERE s.id IS NOT NULL)
  -- mfu, ops, summary: when under half of the counted GPU time (counted_op; mfu: in its steps and
  -- @rank) ran in ops with a FLOPs model, the FLOP/s figures speak for the smaller part: say so,
  -- with the op name holding most of the rest and why it has none where the trace says
  -- (model_gap). (Communication has no FLOPs by nature: it is named, not excused.) The name is
  -- work_name's, as ops gives it: "combine(F) > cudaLaunchKernelExC", never a bare runtime call.
  -- mfu: gpu_busy_pct is capped at 100 where a step's GPU work (launched in it) was busy longer than
  -- the step lasted (it ran past the step's end): say which steps and by how much.
  WHEN 'mfu' THEN (
    WITH s AS (SELECT e.trace, e.step, e.dur FROM event e JOIN trace t ON t.id = e.trace
               WHERE e.kind IN ('annotation', 'cpu_op') AND e.step IS NOT NULL AND e.name GLOB 'ProfilerStep#*'
                 AND e.name = 'ProfilerStep#' || e.step  -- (GLOB first, as report_mfu.sql)
                 AND (@rank IS NULL OR t.rank = @rank)),
    g AS (SELECT trace, step, busy_ns AS busy FROM step_busy('main')),  -- (as report_mfu.sql's)
    -- (Listed by step, then trace: the order the join gave depended on its plan, which a saved
    -- database's step_busy changed.)
    over AS MATERIALIZED (SELECT s.step, g.busy - s.dur AS extra FROM s JOIN g ON g.trace = s.trace AND g.step = s.step
                          WHERE g.busy > s.dur ORDER BY s.step, s.trace),
    capped(note) AS (
      SELECT printf('gpu_busy_pct capped at 100 in %d step(s) (%s): their GPU work ran past the step''s end, busy '
                    || 'longer than the step (by up to %.3f ms); gpu_busy_ms and busy_mfu_pct keep all of it',
                    count(*), group_concat(step, ', '), max(extra) / 1e6)
      FROM over HAVING count(*) > 0)
    SELECT group_concat(note, '; ') FROM (SELECT note FROM model_cover UNION ALL SELECT note FROM capped))
  -- gemm, sdpa, conv: a sheet lists the family's ops that have a model and the family's kernels
  -- under custom ops; the family's aten ops without a model (no Input Dims: an aten::mm recorded
  -- without shapes) are in neither, so a sheet with rows says what it leaves out and why. (An
  -- empty sheet says it once, in empty_report.sql.)
  WHEN 'gemm' THEN (SELECT note FROM family_gap)
  WHEN 'sdpa' THEN (SELECT note FROM family_gap)
  WHEN 'conv' THEN (SELECT note FROM family_gap)
  -- optimizable: idle_pct is capped at 100 where the idle time torch's rule gives an event
  -- exceeds its duration (130% on a pipeline-parallel trace).
  WHEN 'optimizable' THEN (
    SELECT printf('idle_pct capped at 100 for %d of the ranked events: the GPU idle time torch.profiler''s rule '
                  || 'gives them exceeds their duration (score keeps torch''s figure)', count(*))
    FROM trace t, optimizable_events(t.id, coalesce(@top, 10)) j
    WHERE (@rank IS NULL OR t.rank = @rank) AND j.idle_fraction > 1 HAVING count(*) > 0)
  WHEN 'ops' THEN (SELECT note FROM model_cover)
  WHEN 'summary' THEN (SELECT note FROM model_cover)
  -- `kernels @details` (issue 49's words): the per-launch-shape rows are their own report, since a
  -- report's columns do not change with its parameters; say where they are rather than ignore it.
  WHEN 'kernels' THEN iif(@details IS NOT NULL AND @details IS NOT 0,
                          'grid and block per kernel: .report kernel_details (the same kernels, one row per launch shape)', NULL)
END;
-- timeline, overlap, collectives: communication is what the kernel rules name or an op or
-- annotation saying so launched (gpu_class). Kernels that neither classes, on a stream beside the
-- busiest one of their trace and device (a stream is one device's: another GPU's streams are not
-- beside it), holding >= 10% of the trace's kernel time, on a stream with no communication kernel,
-- may be a library no rule knows: name the largest and the rule to add.
SELECT CASE WHEN @report IN ('timeline', 'timeline_ranks', 'overlap', 'overlap_groups', 'collectives') THEN (
    -- (The kernels per stream, class and name from kernel_totals, one pass in C++: grouped in SQL,
    -- the side streams' kernels read once per side stream and classed one gpu_class call at a
    -- time, this note took 0.1-0.2 s of a 200 MB trace's 0.5 s load.)
    WITH kt AS MATERIALIZED (SELECT trace, coalesce(device, -1) AS device, coalesce(stream, -1) AS stream, class, name,
                                    positive_dur AS dur
                             FROM kernel_totals('main') WHERE positive_dur > 0),
    per_stream AS MATERIALIZED (SELECT trace, device, stream, total(dur) AS ns FROM kt GROUP BY 1, 2, 3),
    total AS (SELECT trace, total(ns) AS ns FROM per_stream GROUP BY trace),
    busiest AS MATERIALIZED (SELECT trace, device, stream
                FROM (SELECT trace, device, stream, row_number() OVER (PARTITION BY trace, device ORDER BY ns DESC, stream) AS r
                      FROM per_stream) WHERE r = 1),
    -- The streams beside their trace and device's busiest one, and their kernels. (A busiest
    -- stream may be the one with the fewest kernels: the 200 MB MI300 ResNet's 238 long ones,
    -- beside 41,692 short ones on stream 0.)
    beside AS MATERIALIZED (SELECT k.*, b.stream AS main_stream
                            FROM kt k JOIN busiest b ON b.trace = k.trace AND b.device = k.device AND k.stream <> b.stream),
    comm_streams AS MATERIALIZED (SELECT DISTINCT trace, device, stream FROM beside WHERE class = 'communication'),
    -- The side kernels no rule names that computation launched, per stream; then, for the one
    -- stream the note names, its kernels per name.
    quiet AS MATERIALIZED (SELECT * FROM beside
              WHERE class = 'compute' AND kernel_rule_of(name) IS NULL
                AND (trace, device, stream) NOT IN (SELECT trace, device, stream FROM comm_streams)),
    streams AS (SELECT trace, device, stream, main_stream, total(dur) AS ns FROM quiet GROUP BY trace, device, stream),
    worst AS MATERIALIZED (
              SELECT s.trace, s.device, s.stream, s.main_stream, s.ns, t.ns AS trace_ns
              FROM streams s JOIN total t ON t.trace = s.trace
              WHERE s.ns >= 0.1 * t.ns ORDER BY s.ns DESC, s.trace, s.device, s.stream LIMIT 1),
    largest AS (SELECT q.name FROM quiet q JOIN worst w ON w.trace = q.trace AND w.device = q.device AND w.stream = q.stream
                GROUP BY q.name ORDER BY total(q.dur) DESC, q.name LIMIT 1)
    SELECT printf('%.3f ms of kernels (%.0f%% of trace %d''s kernel time) ran on stream %d beside stream %d%s, '
                  || 'counted as computation: no kernel_rule names them and no op or annotation saying '
                  || 'communication launched them (the largest: %s). If they communicate: '
                  || 'INSERT INTO kernel_rule(pattern, class) VALUES (''*%s*'', ''communication'')',
                  ns / 1e6, 100.0 * ns / trace_ns, trace, stream, main_stream,
                  iif(device >= 0 AND (SELECT count(DISTINCT device) FROM per_stream p WHERE p.trace = worst.trace) > 1,
                      printf(' of GPU %d', device), ''),
                  short_name(name), lower(short_name(name)))
    FROM worst, largest)
END;
-- diff: pairs events by name. When most names of the side it compares (GPU work, unless @device
-- 'CPU') are on one side only, as between GPU vendors, libraries or dtypes (CUDA's and HIP's
-- kernels never share a name), its rows say little: point at the reports that pair by op. Names
-- as the diff keys them by default (normalize_name), every rank and step.
SELECT CASE @report WHEN 'diff' THEN (
    WITH kinds(kind) AS (SELECT value FROM json_each(iif(@device = 'CPU',
                           '["cpu_op","annotation","python","runtime","driver"]', '["kernel","memcpy","memset"]'))),
    a AS (SELECT DISTINCT normalize_name(name) AS n FROM (SELECT DISTINCT name FROM main.event WHERE kind IN kinds)),
    b AS (SELECT DISTINCT normalize_name(name) AS n FROM (SELECT DISTINCT name FROM other.event WHERE kind IN kinds)),
    s AS (SELECT (SELECT count(*) FROM (SELECT n FROM a UNION SELECT n FROM b)) AS names,
                 (SELECT count(*) FROM (SELECT n FROM a INTERSECT SELECT n FROM b)) AS both),
    d AS (SELECT (SELECT group_concat(DISTINCT name) FROM main.device WHERE name IS NOT NULL) AS a,
                 (SELECT group_concat(DISTINCT name) FROM other.device WHERE name IS NOT NULL) AS b)
    SELECT printf('%d of %d %s names are on one side only%s, so most rows pair nothing; ' ||
                  '--report diff_tree_ops pairs ops through the call tree, --report diff_shapes by op and shapes',
                  names - both, names, iif(@device = 'CPU', 'CPU', 'GPU'),
                  iif(d.a IS NOT NULL AND d.b IS NOT NULL AND d.a <> d.b, printf(' (%s vs %s)', d.a, d.b), ''))
    FROM s, d WHERE names >= 2 AND 2 * (names - both) > names)
END;
-- diff_tree, diff_tree_ops, diff_tree_summary: tree_diff pairs the trees from their roots down, by
-- name. When no root of one side has a counterpart on the other (different programs, or profiles
-- whose top-level annotations differ), no GPU work has a common ancestor: diff_tree's rows then
-- pair nothing and the grouped reports are empty. Say so, with the reports that pair otherwise.
SELECT CASE WHEN @report LIKE 'diff_tree%' THEN (
    SELECT printf('the two call trees share no root: no top-level op, annotation or frame of main has the name '
                  || 'of one in other (tree_diff pairs from the roots down), so none of the %d GPU events of main '
                  || 'and %d of other has a common ancestor; --report diff pairs kernels by name, '
                  || '--report diff_shapes ops by name and shapes',
                  (SELECT count(*) FROM tree_diff WHERE source = 'trace1'),
                  (SELECT count(*) FROM tree_diff WHERE source = 'trace2'))
    WHERE EXISTS (SELECT 1 FROM tree_diff WHERE source = 'trace1')
      AND EXISTS (SELECT 1 FROM tree_diff WHERE source = 'trace2')
      AND NOT EXISTS (SELECT 1 FROM tree_diff WHERE lca_uid IS NOT NULL))
END;
