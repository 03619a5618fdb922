"""Checks of tests/unit/test_kv_rank.c, run with the system's python3.

users SEED N [REFERENCE_DIR]
    The user set of the KV-cache reference's UserSimulator.generate_mixed_users(N)
    after random.seed(SEED), one line per user: type qos context generation
    repr(think_time). The draws are written out here (the reference's order:
    random.choice of the type, random.random for the QoS class, randint of the
    context and of the generation, uniform of the think time, with the
    reference's config.yaml ranges), so the test needs no copy of the
    reference; when REFERENCE_DIR (kv_cache_benchmark/) is given, the
    reference's own function must draw the same.

entries FOLDER EXPECT_FILES EXPECT_BODY_BYTES [MAX_BODY_BYTES]
    Every FOLDER/*.npy loads with numpy as the reference's entry (float16,
    shape (12, 2, T, 4, 128) of tiny-1b), its header is byte for byte the one
    np.save writes for that shape, its body is T x 24576 bytes, not all zero,
    and no two of its first 4 KiB blocks are alike; there are EXPECT_FILES of
    them and their bodies add up to EXPECT_BODY_BYTES (-1: not checked), and
    to at most MAX_BODY_BYTES (the storage tier's capacity).

repr HEX...
    Python's repr of each float (given as C's %a), one a line.

json FILE REQUESTS ELAPSED STORAGE_READ_BYTES STORAGE_WRITTEN_BYTES [QOS]
    FILE is the reference's results JSON with its keys and these figures,
    and its figures agree with each other (QOS: the users' only QoS class).
"""
import io
import json
import os
import random
import sys

TEMPLATES = {
    'chatbot': ((512, 4096), (50, 200), (0.1, 0.5)),
    'coding': ((4096, 25000), (100, 500), (0.2, 1.0)),
    'document': ((4096, 16384), (200, 800), (0.3, 1.5)),
}


def draw_users(seed, n):
    random.seed(seed)
    out = []
    for _ in range(n):
        kind = random.choice(['chatbot', 'coding', 'document'])
        r = random.random()
        qos = 'interactive' if r < 0.15 else 'responsive' if r < 0.50 else 'batch'
        ctx, gen, think = TEMPLATES[kind]
        out.append((kind, qos, random.randint(*ctx), random.randint(*gen), random.uniform(*think)))
    return out


def cmd_users(args):
    seed, n = int(args[0]), int(args[1])
    users = draw_users(seed, n)
    if len(args) > 2:
        sys.path.insert(0, args[2])
        from kv_cache.workload import UserSimulator
        random.seed(seed)
        ref = [(u.context_length, u.generation_length, u.think_time, u.qos_level.value)
               for u in UserSimulator.generate_mixed_users(n)]
        mine = [(u[2], u[3], u[4], u[1]) for u in users]
        assert ref == mine, 'the draws here differ from the reference\'s generate_mixed_users'
    for u in users:
        print(u[0], u[1], u[2], u[3], repr(u[4]))


def cmd_entries(args):
    import numpy as np
    folder, want_files, want_body = args[0], int(args[1]), int(args[2])
    names = sorted(f for f in os.listdir(folder) if f.endswith('.npy'))
    assert len(names) == want_files, (len(names), want_files)
    body = 0
    for name in names:
        path = os.path.join(folder, name)
        a = np.load(path, mmap_mode='r')
        assert a.dtype == np.float16, (name, a.dtype)
        assert len(a.shape) == 5 and a.shape[0] == 12 and a.shape[1] == 2 and a.shape[3:] == (4, 128), a.shape
        want = io.BytesIO()
        np.lib.format.write_array_header_1_0(want, {'descr': '<f2', 'fortran_order': False, 'shape': a.shape})
        head = want.getvalue()
        with open(path, 'rb') as f:
            got = f.read(len(head))
            blocks = [f.read(4096) for _ in range(64)]
        assert got == head, (name, got, head)
        size = os.path.getsize(path) - len(head)
        assert size == a.shape[2] * 24576, (name, size)
        blocks = [b for b in blocks if len(b) == 4096]
        assert len(set(blocks)) == len(blocks), name + ': two 4 KiB blocks alike'
        assert any(any(b) for b in blocks) or not blocks, name + ': all zero'
        body += size
    assert want_body < 0 or body == want_body, (body, want_body)
    if len(args) > 3:
        assert body <= int(args[3]), ('over the capacity', body, int(args[3]))
    print(len(names), body)


def cmd_json(args):
    path, requests, elapsed, read_bytes, written_bytes = args[0], int(args[1]), float(args[2]), int(args[3]), int(args[4])
    single_qos = args[5] if len(args) > 5 else None
    with open(path) as f:
        r = json.load(f)
    top = ['requests_completed', 'total_tokens_generated', 'total_storage_io_latency', 'total_generation_latency',
           'throughput_timeline', 'multi_turn_cache_hits', 'multi_turn_cache_misses', 'seed']
    if requests:
        top.append('summary')
    assert list(r) == top, list(r)
    assert r['requests_completed'] == requests
    if not requests:
        print('no summary')
        return
    s = r['summary']
    assert list(s) == ['total_requests', 'total_tokens', 'elapsed_time', 'avg_throughput_tokens_per_sec',
                       'total_storage_io_time', 'storage_throughput_tokens_per_sec', 'requests_per_second',
                       'end_to_end_latency_ms', 'storage_io_latency_ms', 'generation_latency_ms', 'cache_stats',
                       'qos_metrics', 'prefix_cache_stats', 'autoscaling_stats', 'autoscaling_summary',
                       'multi_turn_stats'], list(s)
    assert s['total_requests'] == requests and s['elapsed_time'] == elapsed
    for k in ('end_to_end_latency_ms', 'storage_io_latency_ms', 'generation_latency_ms'):
        assert list(s[k]) == ['mean', 'p50', 'p95', 'p99', 'p999', 'p9999'], k
        assert s[k]['p50'] <= s[k]['p95'] <= s[k]['p99'] <= s[k]['p999'] <= s[k]['p9999'], k
    c = s['cache_stats']
    for k in ('cache_hit_rate', 'cache_hits', 'cache_misses', 'storage_entries', 'storage_health', 'prefill_writes',
              'decode_reads', 'tier_storage_kv_bytes_read_gb', 'tier_storage_read_bandwidth_gbps',
              'tier_storage_write_bandwidth_gbps', 'read_iops', 'write_iops', 'storage_tokens_processed'):
        assert k in c, k
    assert c['tier_storage_read_bandwidth_gbps'] == read_bytes / 1024**3 / elapsed
    assert c['tier_storage_write_bandwidth_gbps'] == written_bytes / 1024**3 / elapsed
    assert c['tier_storage_kv_bytes_written_gb'] == written_bytes / 1024**3
    assert c['storage_health']['overall_status'] in ('PASS', 'FAIL')
    assert sorted(s['qos_metrics']) == ['batch', 'interactive', 'responsive']
    assert sum(q.get('total_requests', 0) for q in s['qos_metrics'].values()) == requests
    assert list(s['prefix_cache_stats']) == ['prefix_hits', 'prefix_misses', 'system_prompt_reuse',
                                             'common_phrase_reuse', 'bytes_saved']
    assert s['autoscaling_stats'] == [] and s['autoscaling_summary'] is None
    assert list(s['multi_turn_stats']) == ['cache_hits', 'cache_misses', 'hit_rate']
    # figures that must agree with each other
    assert s['requests_per_second'] == requests / elapsed
    assert s['total_tokens'] == r['total_tokens_generated']
    assert s['avg_throughput_tokens_per_sec'] == r['total_tokens_generated'] / elapsed
    assert s['total_storage_io_time'] == r['total_storage_io_latency']
    e2e, io_ = s['end_to_end_latency_ms'], s['storage_io_latency_ms']
    for k in ('p50', 'p95', 'p99', 'p999', 'p9999'):
        # a request's storage time lies within its span: so does every order statistic
        assert e2e[k] >= io_[k], (k, e2e[k], io_[k])
    assert c['read_iops'] == c['cache_hits'] == c['decode_reads'], c
    # every entry counted is in one tier (demotions count in offloads_storage too)
    assert c['cpu_entries'] + c['storage_entries'] <= c['offloads_cpu'] + c['offloads_storage'], c
    assert c['write_iops'] == c['prefill_writes'], c
    assert c['tier_storage_kv_bytes_read_gb'] == read_bytes / 1024**3
    if c['cpu_entries'] or c['offloads_cpu']:
        assert [x['name'] for x in c['storage_health']['criteria']].count('CPU RAM P95 < 150ms') == 1
        assert 'cpu_write_p50_ms' in c
    p = s['prefix_cache_stats']
    assert p['prefix_hits'] == p['system_prompt_reuse'] and p['prefix_hits'] + p['prefix_misses'] >= requests
    # a hit saves the words of one of the three prompts (5, 9 or 6) x 24576 bytes a token
    assert 5 * 24576 * p['prefix_hits'] <= p['bytes_saved'] <= 9 * 24576 * p['prefix_hits']
    assert p['bytes_saved'] % 24576 == 0
    m = s['multi_turn_stats']
    assert m['cache_hits'] == r['multi_turn_cache_hits'] and m['cache_misses'] == r['multi_turn_cache_misses']
    if single_qos:
        # one QoS class: its latencies (ms) are the requests' end-to-end latencies
        q = s['qos_metrics'][single_qos]['latency_ms']
        for k in ('mean', 'p50', 'p95', 'p99'):
            assert abs(q[k] - e2e[k]) <= 1e-9 * e2e[k], (k, q[k], e2e[k])
    # the text is json.dump's with indent 4: dumping the parsed object gives it back
    with open(path) as f:
        assert f.read() == json.dumps(r, indent=4), 'not the text json.dump(indent=4) writes'
    print('ok')


def cmd_repr(args):
    for a in args:
        print(repr(float.fromhex(a)))


if __name__ == '__main__':
    {'users': cmd_users, 'entries': cmd_entries, 'json': cmd_json, 'repr': cmd_repr}[sys.argv[1]](sys.argv[2:])
