// Every lesson's Chrome export (and each variant's), read by viewers StreamScope does not control: Chrome DevTools'
// trace engine (npm @paulirish/trace_engine), speedscope's trace-event importer (npm speedscope) and a model of the
// rules by which Perfetto's JSON importer binds flow events. Each must find what the native trace holds: the same
// rows (threads), the same spans per row, the same arrows between the same spans. Exit status 1 when one loses
// anything, 77 (ctest: skipped) where node is too old or the npm packages are not installed (tools/setup.sh).
//
//   node chrome_export_readers.mjs --cli PATH --presets DIR --npm DIR --work DIR [--only ID]
//
// Spans are told apart by row and start time, as viewers bind arrows: "tid@ts" (tid = track index + 1, ts in µs
// from the earliest span, docs/FORMATS.md). What a reader cannot show by its own rules is counted apart, named in
// the output, and not a failure: zero-length spans in speedscope (it weighs frames by time) and, in the trace engine,
// arrows whose two spans start at the same time (it keys a flow's events by their time).
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';
import vm from 'node:vm';

const SKIP = 77;

function parseArgs(argv) {
    const args = {};
    for (let i = 0; i < argv.length; i += 2) {
        if (!argv[i].startsWith('--') || i + 1 >= argv.length)
            throw new Error(`usage: --cli PATH --presets DIR --npm DIR --work DIR [--only ID] (at '${argv[i]}')`);
        args[argv[i].slice(2)] = argv[i + 1];
    }
    for (const k of ['cli', 'presets', 'npm', 'work'])
        if (!args[k])
            throw new Error(`missing --${k}`);
    return args;
}

function packageVersion(npmDir, name) {
    const file = path.join(npmDir, 'node_modules', name, 'package.json');
    return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')).version : null;
}

// ---- the lessons, simulated and exported

function lessonCases(presetsDir, only) {
    const cases = [];
    for (const file of fs.readdirSync(presetsDir).filter(f => f.endsWith('.json')).sort()) {
        const id = path.basename(file, '.json');
        if (only && !id.startsWith(only))
            continue;
        const scenario = JSON.parse(fs.readFileSync(path.join(presetsDir, file), 'utf8'));
        cases.push({id, variant: ''});
        for (const v of scenario.variants ?? [])
            cases.push({id, variant: v.id});
    }
    return cases;
}

function exportCase(cli, workDir, c) {
    const base = path.join(workDir, c.variant ? `${c.id}--${c.variant}` : c.id);
    const native = `${base}.native.json`;
    // Not *.chrome.json: speedscope takes files so named for DevTools performance profiles, whatever they hold.
    const chrome = `${base}.trace.json`;
    const run = ['run', c.id, '--backend', 'sim', '-o', native];
    if (c.variant)
        run.push('--variant', c.variant);
    execFileSync(cli, run, {stdio: ['ignore', 'ignore', 'pipe']});
    execFileSync(cli, ['convert', native, '-o', chrome, '--to', 'chrome'], {stdio: ['ignore', 'ignore', 'pipe']});
    return {native: JSON.parse(fs.readFileSync(native, 'utf8')), chromeText: fs.readFileSync(chrome, 'utf8')};
}

// StreamScope's own numbers, from the native trace: spans per row and the arrows, by row and start time.
function nativeSummary(native) {
    const s = native.spans;
    const n = s.track.length;
    let origin = Infinity;
    for (let i = 0; i < n; ++i)
        origin = Math.min(origin, s.start[i]);
    const key = i => `${s.track[i] + 1}@${(s.start[i] - origin) / 1000}`;
    const rows = new Map(); // tid -> {name, spans, timed}
    for (let i = 0; i < n; ++i) {
        const tid = s.track[i] + 1;
        const row = rows.get(tid) ?? {name: native.tracks[s.track[i]].name, spans: 0, timed: 0};
        ++row.spans;
        if (s.end[i] > s.start[i])
            ++row.timed;
        rows.set(tid, row);
    }
    const f = native.flows;
    const flows = f.from.map((from, k) => ({
        pair: pairKey(key(from), key(f.to[k])),
        sameStart: s.start[from] === s.start[f.to[k]],
    }));
    return {rows, flows, spans: n};
}

function pairKey(a, b) { return a < b ? `${a} ${b}` : `${b} ${a}`; }

// What of `expected` (arrow pair keys) is missing from `found`, and what `found` has that was not expected.
function compareArrows(expected, found) {
    const count = new Map();
    for (const k of found)
        count.set(k, (count.get(k) ?? 0) + 1);
    const lost = [];
    for (const k of expected) {
        const c = count.get(k) ?? 0;
        if (c === 0)
            lost.push(k);
        else
            count.set(k, c - 1);
    }
    const extra = [...count].filter(([, c]) => c > 0).map(([k]) => k);
    return {lost, extra};
}

// ---- Chrome DevTools' trace engine

async function loadTraceEngine(npmDir) {
    const root = path.join(npmDir, 'node_modules', '@paulirish', 'trace_engine');
    // The engine is written for a browser; its own Node example polyfills DOMRect.
    const {polyfillDOMRect} = await import(pathToFileURL(path.join(root, 'analyze-trace.mjs')).href);
    const Trace = await import(pathToFileURL(path.join(root, 'models', 'trace', 'trace.js')).href);
    polyfillDOMRect();
    return async events => {
        const model = Trace.TraceModel.Model.createWithAllHandlers();
        await model.parse(events);
        const data = model.parsedTrace().data;
        // Per thread, the complete events in the thread's tree: what the timeline draws. An event that starts
        // inside another and ends after it is left out of the tree.
        const rows = new Map();
        for (const process of data.Renderer.processes.values())
            for (const [tid, thread] of process.threads)
                rows.set(Number(tid),
                         thread.entries.filter(e => e.ph === 'X' && data.Renderer.entryToNode.has(e)).length);
        // A flow: the events it binds, in its order; the arrows are between neighbours.
        const arrows = [];
        for (const flow of data.Flows.flows)
            for (let i = 1; i < flow.length; ++i)
                arrows.push(pairKey(`${flow[i - 1].tid}@${flow[i - 1].ts}`, `${flow[i].tid}@${flow[i].ts}`));
        return {rows, arrows};
    };
}

// ---- speedscope

// speedscope ships one browser bundle: an app whose importer is internal. The bundle is run in a context of its
// own without its last statements (the app starting in the page), and the module that imports files is handed out:
// importProfileGroupFromText(name, text), what the app calls for a dropped file.
function loadSpeedscope(npmDir) {
    const dir = path.join(npmDir, 'node_modules', 'speedscope', 'dist', 'release');
    const bundle = fs.readdirSync(dir).find(f => /^speedscope-[\w-]+\.js$/.test(f));
    if (!bundle)
        throw new Error(`no speedscope-*.js in ${dir}`);
    let src = fs.readFileSync(path.join(dir, bundle), 'utf8');
    const esc = s => s.replace(/\$/g, '\\$');
    const ns = src.match(/var ([\w$]+)=\{\};[\w$]+\(\1,\{[^}]*importProfileGroupFromText:/);
    const init = ns && src.match(
        new RegExp(`Promise\\.resolve\\(\\)\\.then\\(\\(\\)=>\\(([\\w$]+)\\(\\),${esc(ns[1])}\\)\\)`));
    const start = src.lastIndexOf('console.log(`speedscope v');
    const end = src.lastIndexOf('})();');
    if (!ns || !init || start < 0 || end < start)
        throw new Error(`${bundle}: its importer module was not found (this test knows speedscope 1.25's bundle)`);
    src = src.slice(0, start)
        + `globalThis.__importText=(n,t)=>(${init[1]}(),${ns[1]}.importProfileGroupFromText(n,t));` + src.slice(end);
    const warnings = [];
    const ctx = {
        console: {
            log() {},
            info() {},
            warn: (...a) => warnings.push(a.join(' ')),
            error: (...a) => warnings.push(a.join(' ')),
        },
        TextDecoder, TextEncoder, URL, atob, btoa, setTimeout, clearTimeout,
        // What the app's modules read from the page while they load.
        location: {hash: '', protocol: 'file:', href: 'file:///'},
        localStorage: {},
        navigator: {userAgent: 'node', platform: 'node'},
        matchMedia: () => ({matches: false, addEventListener() {}, addListener() {}}),
        addEventListener() {},
        removeEventListener() {},
        requestAnimationFrame: f => setTimeout(f, 0),
        cancelAnimationFrame() {},
        devicePixelRatio: 1,
    };
    ctx.window = ctx.self = ctx.globalThis = ctx;
    vm.createContext(ctx);
    vm.runInContext(src, ctx, {filename: bundle});
    return async (name, text) => {
        warnings.length = 0;
        const group = await ctx.__importText(name, text);
        const rows = new Map(); // tid -> calls (frame instances)
        for (const profile of group?.profiles ?? []) {
            const tid = profile.getName().match(/tid (\d+)\)$/);
            let calls = 0;
            profile.forEachCall(() => { ++calls; }, () => {});
            rows.set(tid ? Number(tid[1]) : -1, calls);
        }
        return {rows, warnings: [...warnings]};
    };
}

// ---- Perfetto's rules

// How Perfetto's JSON importer binds v1 flow events, as its source reads (google/perfetto ec5d16b:
// sorter/trace_sorter.h, importers/json/json_trace_parser.cc, importers/common/{slice,flow}_tracker.cc):
// - events go by ts; at equal ts "E" first, then "X" longest first, then the rest; then in file order;
// - an "X" pops the slices of its thread that ended before it (or at its start, unless both are instants) and is
//   pushed; one that overlaps the open slice without nesting goes to an overflow track, not the thread's stack;
// - "s", "t" and "f" with "bp": "e" bind to the topmost slice on the thread's stack, as it stands; an "f" without
//   it to the next slice pushed on that thread; v1 flows are keyed by (id, cat, name), and a second "s" of a key
//   is dropped.
function perfettoArrows(events) {
    // Times in integer ns, as the tokenizer makes them (llround of µs × 1000).
    const ns = v => (Number.isInteger(v) ? v * 1000 : Math.round(v * 1000));
    const order = [];
    events.forEach((e, i) => {
        if (e.ph !== 'M')
            order.push({e, i, ts: ns(e.ts), dur: e.ph === 'X' ? ns(e.dur) : 0});
    });
    const key = o => (o.e.ph === 'E' ? -Infinity : o.e.ph === 'X' ? -o.dur : 0);
    order.sort((a, b) => a.ts - b.ts || key(a) - key(b) || a.i - b.i);
    const stacks = new Map(); // tid -> open slices (events)
    const pending = new Map(); // tid -> flow keys waiting for the next slice
    const sources = new Map(); // flow key -> slice
    const arrows = [];
    const at = o => `${o.e.tid}@${o.e.ts}`;
    const end = (flowKey, slice) => {
        const from = sources.get(flowKey);
        if (from) // else flow_end_without_start
            arrows.push(pairKey(at(from), at(slice)));
    };
    for (const o of order) {
        const e = o.e;
        const stack = stacks.get(e.tid) ?? [];
        stacks.set(e.tid, stack);
        const flowKey = `${e.id} ${e.cat} ${e.name}`;
        if (e.ph === 'X') {
            while (stack.length) {
                const top = stack[stack.length - 1];
                const topEnd = top.ts + top.dur;
                if (topEnd < o.ts || (topEnd === o.ts && !(top.dur === 0 && o.dur === 0)))
                    stack.pop();
                else
                    break;
            }
            const top = stack[stack.length - 1];
            if (top && o.ts < top.ts + top.dur && o.ts + o.dur > top.ts + top.dur)
                continue; // spilled onto an overflow track
            stack.push(o);
            for (const k of pending.get(e.tid) ?? [])
                end(k, o);
            pending.delete(e.tid);
        } else if (e.ph === 's' || e.ph === 't' || (e.ph === 'f' && e.bp === 'e')) {
            const top = stack[stack.length - 1];
            if (!top)
                continue; // flow_no_enclosing_slice
            if (e.ph !== 's')
                end(flowKey, top);
            if (e.ph === 't' || (e.ph === 's' && !sources.has(flowKey)))
                sources.set(flowKey, top);
        } else if (e.ph === 'f') {
            pending.set(e.tid, [...(pending.get(e.tid) ?? []), flowKey]);
        }
    }
    return arrows;
}

// ---- the comparison

function compareRows(label, expected, found, problems) {
    for (const [tid, want] of expected) {
        const got = found.get(tid);
        if (got === undefined)
            problems.push(`${label}: row ${tid} (${want.name}) missing`);
        else if (got !== want.count)
            problems.push(`${label}: row ${tid} (${want.name}): ${got} spans, not ${want.count}`);
    }
    for (const tid of found.keys())
        if (!expected.has(tid))
            problems.push(`${label}: row ${tid} that StreamScope does not have`);
}

async function main() {
    const args = parseArgs(process.argv.slice(2));
    const major = Number(process.versions.node.split('.')[0]);
    if (major < 18) {
        console.log(`SKIP: node ${process.versions.node} is too old for the readers (18 or later)`);
        return SKIP;
    }
    const versions = {};
    for (const name of ['@paulirish/trace_engine', 'speedscope']) {
        versions[name] = packageVersion(args.npm, name);
        if (!versions[name]) {
            console.log(`SKIP: npm package ${name} is not in ${args.npm}/node_modules: tools/test.sh installs it ` +
                        '(ensure_npm_packages in tools/setup.sh)');
            return SKIP;
        }
    }
    console.log(`node ${process.versions.node}; ` +
                Object.entries(versions).map(([k, v]) => `${k} ${v}`).join(', ') + `; from ${args.npm}`);

    const traceEngine = await loadTraceEngine(args.npm);
    const speedscope = loadSpeedscope(args.npm);
    fs.mkdirSync(args.work, {recursive: true});
    const cases = lessonCases(args.presets, args.only);
    if (cases.length === 0)
        throw new Error(`no lessons in ${args.presets}`);

    const totals = {spans: 0, arrows: 0, engineSpans: 0, engineArrows: 0, engineSameStart: 0, speedscopeSpans: 0,
                    zeroLength: 0, perfettoArrows: 0};
    let failed = 0;
    for (const c of cases) {
        const name = c.variant ? `${c.id} (${c.variant})` : c.id;
        const {native, chromeText} = exportCase(args.cli, args.work, c);
        const ours = nativeSummary(native);
        const events = JSON.parse(chromeText).traceEvents;
        const problems = [];

        const engine = await traceEngine(events);
        compareRows('trace_engine', new Map([...ours.rows].map(([t, r]) => [t, {name: r.name, count: r.spans}])),
                    engine.rows, problems);
        const engineCan = ours.flows.filter(f => !f.sameStart).map(f => f.pair);
        const e = compareArrows(engineCan, engine.arrows);
        for (const k of e.lost)
            problems.push(`trace_engine: arrow ${k} lost`);
        for (const k of e.extra)
            problems.push(`trace_engine: arrow ${k} that StreamScope does not have`);

        const ss = await speedscope(path.basename(c.id) + '.json', chromeText);
        compareRows('speedscope', new Map([...ours.rows].map(([t, r]) => [t, {name: r.name, count: r.timed}])),
                    ss.rows, problems);
        for (const w of ss.warnings.slice(0, 3))
            problems.push(`speedscope: ${w}`);

        const perfetto = perfettoArrows(events);
        const p = compareArrows(ours.flows.map(f => f.pair), perfetto);
        for (const k of p.lost)
            problems.push(`perfetto rules: arrow ${k} lost`);
        for (const k of p.extra)
            problems.push(`perfetto rules: arrow ${k} that StreamScope does not have`);

        const count = m => [...m.values()].reduce((a, b) => a + b, 0);
        const timed = [...ours.rows.values()].reduce((a, r) => a + r.timed, 0);
        totals.spans += ours.spans;
        totals.arrows += ours.flows.length;
        totals.engineSpans += count(engine.rows);
        totals.engineArrows += engine.arrows.length;
        totals.engineSameStart += ours.flows.length - engineCan.length;
        totals.speedscopeSpans += count(ss.rows);
        totals.zeroLength += ours.spans - timed;
        totals.perfettoArrows += perfetto.length;
        const line = `${name.padEnd(42)} rows ${String(ours.rows.size).padStart(2)}  ` +
                     `spans ${String(ours.spans).padStart(4)}` +
                     ` (trace_engine ${count(engine.rows)}, speedscope ${count(ss.rows)})  arrows ` +
                     `${String(ours.flows.length).padStart(3)} (trace_engine ${engine.arrows.length}, perfetto rules ` +
                     `${perfetto.length})`;
        console.log(`${problems.length ? 'FAIL' : 'ok  '} ${line}`);
        for (const problem of problems.slice(0, 10))
            console.log(`       ${problem}`);
        if (problems.length > 10)
            console.log(`       ... and ${problems.length - 10} more`);
        if (problems.length)
            ++failed;
    }
    console.log(`\n${cases.length} exports: StreamScope ${totals.spans} spans, ${totals.arrows} arrows; ` +
                `trace_engine ${totals.engineSpans} spans, ${totals.engineArrows} arrows ` +
                `(${totals.engineSameStart} join spans that start at the same time, which it cannot show); ` +
                `speedscope ${totals.speedscopeSpans} spans (${totals.zeroLength} of zero length, which it does not ` +
                `show); perfetto rules ${totals.perfettoArrows} arrows`);
    if (failed) {
        console.log(`${failed} of ${cases.length} exports lose spans or arrows in a reader (files in ${args.work})`);
        return 1;
    }
    return 0;
}

main().then(code => process.exit(code), e => {
    console.error(e.stack ?? String(e));
    process.exit(1);
});
