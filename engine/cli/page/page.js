// The viewer of a Gyre page (docs/viewing.md): decodes the JSON data the page carries and draws
// a run (WebGL scene, timeline, plots) or a soak (series and histograms on 2D canvases).
//
// Self-check for tests: once it has drawn, the page sets data-gyre-status on <body> to "ok" or
// to an error message, and data-gyre-frames to the number of frames drawn so far. A run page
// draws a sample of frames on load (the first, the last, the first frame of every entity and an
// even spread) and is "ok" only when every entity with frames was drawn with all its colliders,
// the last frame was reached, WebGL reported no error and the picture is not one flat colour.
'use strict';
(function () {
  const body = document.body;
  const problems = [];
  let framesDrawn = 0;

  function problem(message) {
    problems.push(message);
    body.dataset.gyreStatus = 'error: ' + problems[0];
    document.getElementById('problems').textContent = problems.join('; ');
    console.error('gyre page: ' + message);
  }
  window.addEventListener('error', (e) => problem(e.message || 'script error'));
  window.addEventListener('unhandledrejection', (e) => problem(String(e.reason)));

  function counted() {
    framesDrawn++;
    body.dataset.gyreFrames = String(framesDrawn);
  }

  function finish() {
    if (problems.length === 0) body.dataset.gyreStatus = 'ok';
  }

  const $ = (id) => document.getElementById(id);
  const data = JSON.parse($('gyre-data').textContent);

  // ---- decoding ------------------------------------------------------------------------------

  function bytesOf(base64) {
    const text = atob(base64);
    const out = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
    return out;
  }

  // Varints of at most 2^53 (the writer clamps its integers to 2^40), without 32-bit shifts.
  class Reader {
    constructor(base64) { this.u = bytesOf(base64); this.i = 0; }
    more() { return this.i < this.u.length; }
    varint() {
      let value = 0, scale = 1, b;
      do {
        if (this.i >= this.u.length) throw new Error('the page data is truncated');
        b = this.u[this.i++];
        value += (b & 127) * scale;
        scale *= 128;
      } while (b & 128);
      return value;
    }
    signed() {
      const z = this.varint();
      return z % 2 ? -(z + 1) / 2 : z / 2;
    }
  }

  function fmt(v, digits) {
    if (v === null || !isFinite(v)) return '–';
    return Number(v).toFixed(digits === undefined ? 3 : digits);
  }

  function showInfo() {
    const info = $('info');
    for (const [key, value] of data.info) {
      const span = document.createElement('span');
      span.append(key + ' ');
      const b = document.createElement('b');
      b.textContent = value;
      span.append(b);
      info.append(span);
    }
    const scene = data.info.find((kv) => kv[0] === 'scene');
    $('title').textContent = 'Gyre ' + data.kind + (scene ? ': ' + scene[1] : '');
    document.title = $('title').textContent;
  }

  // ---- small 2D plotting shared by both pages ------------------------------------------------

  function sizeCanvas(canvas) {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(canvas.clientWidth * dpr));
    const h = Math.max(1, Math.round(canvas.clientHeight * dpr));
    if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
    const g = canvas.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    return { g, w: w / dpr, h: h / dpr };
  }

  const AXIS = ['#e5534b', '#4cc36a', '#4a9eff'];
  const GROUP_COLOURS = ['#4a9eff', '#e5a64b', '#8a93a0', '#b48ce6'];

  // Lines of `series` (arrays of numbers or null, one per x from 0 to n - 1) with a y range that
  // fits them, optional vertical marks [{x, color}], a cursor at x = cursor (or none) and an
  // optional horizontal gate. log: a logarithmic y axis.
  function plotLines(canvas, n, series, opts) {
    const { g, w, h } = sizeCanvas(canvas);
    g.clearRect(0, 0, w, h);
    const left = 46, right = 6, top = 6, bottom = 16;
    let lo = Infinity, hi = -Infinity;
    for (const s of series) {
      for (let i = 0; i < n; i++) {
        const v = s.values[i];
        if (v === null || !isFinite(v) || (opts.log && v <= 0)) continue;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
    if (opts.gate !== undefined && opts.gate !== null && isFinite(opts.gate)) {
      lo = Math.min(lo, opts.gate);
      hi = Math.max(hi, opts.gate);
    }
    g.strokeStyle = '#2c323c';
    g.strokeRect(left + 0.5, top + 0.5, w - left - right, h - top - bottom);
    g.fillStyle = '#8a93a0';
    g.font = '10px system-ui, sans-serif';
    if (!(lo <= hi)) {
      g.fillText('no samples', left + 8, top + 16);
      return;
    }
    if (opts.log) { lo = Math.log10(lo); hi = Math.log10(hi); }
    if (hi - lo < 1e-9) { hi += 0.5; lo -= 0.5; }
    const pad = (hi - lo) * 0.06;
    lo = !opts.log && lo >= 0 && lo - pad < 0 ? 0 : lo - pad;
    hi += pad;
    const X = (i) => left + (n > 1 ? (i / (n - 1)) * (w - left - right) : 0);
    const Y = (v) => top + (1 - ((opts.log ? Math.log10(v) : v) - lo) / (hi - lo)) * (h - top - bottom);
    const label = (v) => (opts.log ? Math.pow(10, v) : v);
    g.textAlign = 'right';
    g.fillText(fmtAxis(label(hi)), left - 4, top + 9);
    g.fillText(fmtAxis(label(lo)), left - 4, h - bottom);
    g.textAlign = 'left';
    if (opts.xLabel) g.fillText(opts.xLabel, left + 4, h - 3);
    for (const m of opts.marks || []) {
      g.strokeStyle = m.color;
      g.beginPath(); g.moveTo(X(m.x) + 0.5, top); g.lineTo(X(m.x) + 0.5, h - bottom); g.stroke();
    }
    if (opts.gate !== undefined && opts.gate !== null && isFinite(opts.gate)) {
      g.strokeStyle = '#e5534b';
      g.setLineDash([5, 4]);
      g.beginPath(); g.moveTo(left, Y(opts.gate)); g.lineTo(w - right, Y(opts.gate)); g.stroke();
      g.setLineDash([]);
      g.fillStyle = '#e5534b';
      g.textAlign = 'right';
      g.fillText('gate ' + fmtAxis(opts.gate), w - right - 2, Y(opts.gate) - 3);
      g.textAlign = 'left';
    }
    for (const s of series) {
      g.strokeStyle = s.color;
      g.lineWidth = s.width || 1.2;
      g.beginPath();
      let pen = false;
      for (let i = 0; i < n; i++) {
        const v = s.values[i];
        if (v === null || !isFinite(v) || (opts.log && v <= 0)) { pen = pen && opts.connect; continue; }
        if (pen) g.lineTo(X(i), Y(v)); else g.moveTo(X(i), Y(v));
        pen = true;
      }
      g.stroke();
      g.lineWidth = 1;
    }
    if (opts.cursor !== undefined && opts.cursor !== null) {
      g.strokeStyle = '#ffffff';
      g.beginPath(); g.moveTo(X(opts.cursor) + 0.5, top); g.lineTo(X(opts.cursor) + 0.5, h - bottom);
      g.stroke();
    }
  }

  function fmtAxis(v) {
    const a = Math.abs(v);
    if (a !== 0 && (a >= 1e5 || a < 1e-2)) return v.toExponential(2);
    return String(Number(v.toPrecision(3)));
  }

  // ---- soak pages ----------------------------------------------------------------------------

  function histogramPlot(canvas, hist) {
    const { g, w, h } = sizeCanvas(canvas);
    g.clearRect(0, 0, w, h);
    const left = 46, right = 6, top = 6, bottom = 16;
    g.strokeStyle = '#2c323c';
    g.strokeRect(left + 0.5, top + 0.5, w - left - right, h - top - bottom);
    g.fillStyle = '#8a93a0';
    g.font = '10px system-ui, sans-serif';
    const vals = hist.values, counts = hist.counts;
    let lo = Infinity, hi = -Infinity, total = 0;
    for (let i = 0; i < vals.length; i++) {
      if (counts[i] > 0 && vals[i] > 0) { lo = Math.min(lo, vals[i]); hi = Math.max(hi, vals[i]); }
      total += counts[i];
    }
    if (hist.gate !== null && isFinite(hist.gate) && hist.gate > 0) {
      lo = Math.min(lo, hist.gate); hi = Math.max(hi, hist.gate);
    }
    if (!(lo <= hi) || total === 0) {
      g.fillText('no samples', left + 8, top + 16);
      return;
    }
    // Log-spaced bins over the observed range: latencies span decades.
    const L0 = Math.log10(lo) - 0.05, L1 = Math.log10(hi) + 0.05, bins = 48;
    const hcount = new Array(bins).fill(0);
    for (let i = 0; i < vals.length; i++) {
      if (!(counts[i] > 0)) continue;
      const v = Math.max(vals[i], lo);
      const b = Math.min(bins - 1, Math.max(0, Math.floor(((Math.log10(v) - L0) / (L1 - L0)) * bins)));
      hcount[b] += counts[i];
    }
    const top_count = Math.max(...hcount);
    const X = (L) => left + ((L - L0) / (L1 - L0)) * (w - left - right);
    // Counts on a log scale too: the tail that a gate is about would not show on a linear one.
    const Y = (c) => top + (1 - Math.log10(1 + c) / Math.log10(1 + top_count)) * (h - top - bottom);
    g.fillStyle = '#4a9eff';
    for (let b = 0; b < bins; b++) {
      if (hcount[b] === 0) continue;
      const x0 = X(L0 + (b / bins) * (L1 - L0)), x1 = X(L0 + ((b + 1) / bins) * (L1 - L0));
      g.fillRect(x0 + 0.5, Y(hcount[b]), Math.max(1, x1 - x0 - 1), h - bottom - Y(hcount[b]));
    }
    g.fillStyle = '#8a93a0';
    g.textAlign = 'right';
    g.fillText(String(top_count), left - 4, top + 9);
    g.fillText('0', left - 4, h - bottom);
    g.textAlign = 'left';
    g.fillText(fmtAxis(Math.pow(10, L0)) + ' ' + hist.unit, left + 2, h - 3);
    g.textAlign = 'right';
    g.fillText(fmtAxis(Math.pow(10, L1)) + ' ' + hist.unit, w - right, h - 3);
    g.textAlign = 'left';
    if (hist.gate !== null && isFinite(hist.gate) && hist.gate > 0) {
      const x = X(Math.log10(hist.gate));
      g.strokeStyle = '#e5534b';
      g.setLineDash([5, 4]);
      g.beginPath(); g.moveTo(x, top); g.lineTo(x, h - bottom); g.stroke();
      g.setLineDash([]);
      g.fillStyle = '#e5534b';
      const text = 'gate ' + fmtAxis(hist.gate);
      const room = x + 3 + g.measureText(text).width < w - right;
      g.textAlign = room ? 'left' : 'right';
      g.fillText(text, room ? x + 3 : x - 3, top + 10);
      g.textAlign = 'left';
    }
  }

  function canvasHasInk(canvas) {
    const g = canvas.getContext('2d');
    const px = g.getImageData(0, 0, canvas.width, canvas.height).data;
    for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) return true;
    return false;
  }

  function soakPage() {
    const main = $('soak');
    main.hidden = false;
    const drawn = [];
    function box(title, note) {
      const div = document.createElement('div');
      div.className = 'box';
      const h2 = document.createElement('h2');
      h2.textContent = title;
      const canvas = document.createElement('canvas');
      div.append(h2, canvas);
      if (note) {
        const p = document.createElement('p');
        p.textContent = note;
        div.append(p);
      }
      main.append(div);
      return canvas;
    }
    const charts = [];
    // Each quantity over time, then its distribution beside it (the histogram of the same name).
    const histograms = data.histograms.slice();
    function addHistogram(hh) {
      const canvas = box(hh.name + ' distribution (' + hh.unit + ')', hh.summary);
      charts.push({ canvas, draw: () => histogramPlot(canvas, hh) });
    }
    for (const s of data.series) {
      const canvas = box(s.name + ' over time (' + s.unit + ')',
        'per ' + fmt(s.duration / s.mean.length, 2) + ' s bin: max (light), mean (dark)' +
        (s.gate !== null ? '; dashed: the gate' : ''));
      const draw = () => {
        // A log scale when the values (and the gate) span decades, as latencies under a far gate do.
        const positive = s.max.filter((v) => v !== null && v > 0).concat(s.gate > 0 ? [s.gate] : []);
        const log = positive.length > 0 && Math.max(...positive) / Math.min(...positive) > 50;
        plotLines(canvas, s.mean.length, [
          { values: s.max, color: '#9cc8ff' }, { values: s.mean, color: '#2f7fe0', width: 1.6 }],
          { gate: s.gate, log, connect: true, xLabel: '0 … ' + fmt(s.duration, 1) + ' s' + (log ? ' (log scale)' : '') });
      };
      charts.push({ canvas, draw });
      const k = histograms.findIndex((hh) => hh.name === s.name);
      if (k >= 0) addHistogram(histograms.splice(k, 1)[0]);
    }
    histograms.forEach(addHistogram);
    if (charts.length === 0) problem('the page holds no series and no histograms');
    const drawAll = () => {
      for (const c of charts) { c.draw(); counted(); }
    };
    drawAll();
    window.addEventListener('resize', drawAll);
    for (const c of charts) {
      if (!canvasHasInk(c.canvas)) problem('a chart drew nothing');
      drawn.push(c);
    }
    finish();
  }

  // ---- run pages: decoding -------------------------------------------------------------------

  function decodeRun() {
    const F = data.frames, U = data.units;
    const entities = data.entities.map((e, index) => {
      const present = new Uint8Array(F), awake = new Uint8Array(F);
      const state = new Float32Array(F * 10); // px py pz vx vy vz qx qy qz qw
      const r = new Reader(e.frames);
      const last = new Float64Array(11);
      for (let s = 0; s + 1 < e.spans.length; s += 2) {
        last.fill(0);
        const first = e.spans[s], count = e.spans[s + 1];
        for (let f = first; f < first + count; f++) {
          const mask = r.varint();
          for (let k = 0; k < 11; k++) if (mask & (1 << k)) last[k] += r.signed();
          if (f >= F) continue;
          present[f] = 1;
          awake[f] = last[10];
          const o = f * 10;
          for (let k = 0; k < 3; k++) {
            state[o + k] = last[k] * U.position;
            state[o + 3 + k] = last[3 + k] * U.velocity;
          }
          let qx = last[6], qy = last[7], qz = last[8], qw = last[9];
          const n = Math.hypot(qx, qy, qz, qw) || 1;
          state[o + 6] = qx / n; state[o + 7] = qy / n; state[o + 8] = qz / n; state[o + 9] = qw / n;
        }
      }
      if (r.more()) throw new Error('entity ' + e.name + ': frame data longer than its spans');
      let firstFrame = -1;
      for (let f = 0; f < F; f++) if (present[f]) { firstFrame = f; break; }
      return { index, name: e.name, body: e.body, character: e.character, colliders: e.colliders,
               present, awake, state, firstFrame, draws: 0 };
    });
    const kinds = data.event_kinds.map((k) => k.kind);
    // Events: contact values are changes since the same pair's previous contact.
    const events = [];
    const er = new Reader(data.events);
    const pairs = new Map();
    let tick = 0;
    while (er.more()) {
      tick += er.signed();
      const kc = er.varint();
      const ev = { tick, kind: kinds[Math.floor(kc / 2)], a: er.varint() - 1, b: er.varint() - 1,
                   point: null, normal: null };
      if (ev.kind === undefined) throw new Error('an event of an unknown kind');
      if (kc % 2) {
        const key = ev.a + ',' + ev.b;
        const last = pairs.get(key) || [0, 0, 0, 0, 0, 0];
        const mask = er.varint();
        for (let k = 0; k < 6; k++) if (mask & (1 << k)) last[k] += er.signed();
        pairs.set(key, last);
        ev.point = [last[0] * U.point, last[1] * U.point, last[2] * U.point];
        ev.normal = [last[3] / U.normal, last[4] / U.normal, last[5] / U.normal];
      }
      events.push(ev);
    }
    events.sort((x, y) => x.tick - y.tick);
    // eventStart[f]: the first event at or after frame f's first tick.
    const eventStart = new Uint32Array(F + 1);
    let j = 0;
    for (let f = 0; f <= F; f++) {
      while (j < events.length && events[j].tick < f * data.stride) j++;
      eventStart[f] = j;
    }
    const geometries = data.geometries.map((g) => {
      const vr = new Reader(g.vertices), ir = new Reader(g.indices);
      const v = new Float32Array(g.vertex_count * 3), idx = new Uint32Array(g.index_count);
      let x = 0, y = 0, z = 0, i = 0;
      for (let k = 0; k < g.vertex_count; k++) {
        x += vr.signed(); y += vr.signed(); z += vr.signed();
        v[3 * k] = x * U.point; v[3 * k + 1] = y * U.point; v[3 * k + 2] = z * U.point;
      }
      for (let k = 0; k < g.index_count; k++) {
        i += ir.signed();
        if (i < 0 || i >= g.vertex_count) throw new Error('a mesh index is out of range');
        idx[k] = i;
      }
      return { v, idx };
    });
    return { F, entities, events, eventStart, geometries };
  }

  // ---- run pages: math -----------------------------------------------------------------------

  function mul(a, b) {
    const o = new Float32Array(16);
    for (let c = 0; c < 4; c++)
      for (let r = 0; r < 4; r++)
        o[c * 4 + r] = a[r] * b[c * 4] + a[4 + r] * b[c * 4 + 1] + a[8 + r] * b[c * 4 + 2] + a[12 + r] * b[c * 4 + 3];
    return o;
  }

  function poseMatrix(px, py, pz, x, y, z, w) {
    return new Float32Array([
      1 - 2 * (y * y + z * z), 2 * (x * y + z * w), 2 * (x * z - y * w), 0,
      2 * (x * y - z * w), 1 - 2 * (x * x + z * z), 2 * (y * z + x * w), 0,
      2 * (x * z + y * w), 2 * (y * z - x * w), 1 - 2 * (x * x + y * y), 0,
      px, py, pz, 1]);
  }

  function perspective(fovy, aspect, near, far) {
    const f = 1 / Math.tan(fovy / 2), nf = 1 / (near - far);
    return new Float32Array([f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1,
                             0, 0, 2 * far * near * nf, 0]);
  }

  function lookAt(eye, at, up) {
    let zx = eye[0] - at[0], zy = eye[1] - at[1], zz = eye[2] - at[2];
    let l = Math.hypot(zx, zy, zz); zx /= l; zy /= l; zz /= l;
    let xx = up[1] * zz - up[2] * zy, xy = up[2] * zx - up[0] * zz, xz = up[0] * zy - up[1] * zx;
    l = Math.hypot(xx, xy, xz); xx /= l; xy /= l; xz /= l;
    const yx = zy * xz - zz * xy, yy = zz * xx - zx * xz, yz = zx * xy - zy * xx;
    return new Float32Array([xx, yx, zx, 0, xy, yy, zy, 0, xz, yz, zz, 0,
      -(xx * eye[0] + xy * eye[1] + xz * eye[2]), -(yx * eye[0] + yy * eye[1] + yz * eye[2]),
      -(zx * eye[0] + zy * eye[1] + zz * eye[2]), 1]);
  }

  // ---- run pages: shapes as triangles (positions and normals, interleaved) -------------------

  function pushTri(out, a, b, c, n) {
    for (const p of [a, b, c]) out.push(p[0], p[1], p[2], n[0], n[1], n[2]);
  }

  function faceNormal(a, b, c) {
    const ux = b[0] - a[0], uy = b[1] - a[1], uz = b[2] - a[2];
    const vx = c[0] - a[0], vy = c[1] - a[1], vz = c[2] - a[2];
    const nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
    const l = Math.hypot(nx, ny, nz) || 1;
    return [nx / l, ny / l, nz / l];
  }

  function boxTris(sx, sy, sz) {
    const out = [], x = sx / 2, y = sy / 2, z = sz / 2;
    const faces = [
      [[1, 0, 0], [[x, -y, -z], [x, y, -z], [x, y, z], [x, -y, z]]],
      [[-1, 0, 0], [[-x, -y, z], [-x, y, z], [-x, y, -z], [-x, -y, -z]]],
      [[0, 1, 0], [[-x, y, -z], [-x, y, z], [x, y, z], [x, y, -z]]],
      [[0, -1, 0], [[-x, -y, z], [-x, -y, -z], [x, -y, -z], [x, -y, z]]],
      [[0, 0, 1], [[-x, -y, z], [x, -y, z], [x, y, z], [-x, y, z]]],
      [[0, 0, -1], [[x, -y, -z], [-x, -y, -z], [-x, y, -z], [x, y, -z]]]];
    for (const [n, q] of faces) { pushTri(out, q[0], q[1], q[2], n); pushTri(out, q[0], q[2], q[3], n); }
    return out;
  }

  // A surface of revolution about Y from a profile of [radius, y, normal radius, normal y].
  function lathe(profile, segments) {
    const out = [];
    for (let i = 0; i + 1 < profile.length; i++) {
      const p = profile[i], q = profile[i + 1];
      for (let s = 0; s < segments; s++) {
        const a0 = (s / segments) * 2 * Math.PI, a1 = ((s + 1) / segments) * 2 * Math.PI;
        const P = (r, y, a) => [r * Math.cos(a), y, -r * Math.sin(a)];
        const N = (nr, ny, a) => [nr * Math.cos(a), ny, -nr * Math.sin(a)];
        const v = [P(p[0], p[1], a0), P(p[0], p[1], a1), P(q[0], q[1], a1), P(q[0], q[1], a0)];
        const n = [N(p[2], p[3], a0), N(p[2], p[3], a1), N(q[2], q[3], a1), N(q[2], q[3], a0)];
        for (const k of [0, 2, 1, 0, 3, 2]) out.push(...v[k], ...n[k]);
      }
    }
    return out;
  }

  function sphereProfile(r, y0, from, to, steps) {
    const prof = [];
    for (let i = 0; i <= steps; i++) {
      const t = from + ((to - from) * i) / steps; // polar angle from -Y (0) to +Y (π)
      const nr = Math.sin(t), ny = -Math.cos(t);
      prof.push([r * nr, y0 + r * ny, nr, ny]);
    }
    return prof;
  }

  function capsuleTris(r, height) {
    const half = Math.max(0, height / 2 - r);
    const prof = sphereProfile(r, -half, 0, Math.PI / 2, 6).concat(sphereProfile(r, half, Math.PI / 2, Math.PI, 6));
    return lathe(prof, 20);
  }

  function cylinderTris(r, height) {
    const h = height / 2;
    return lathe([[0, -h, 0, -1], [r, -h, 0, -1], [r, -h, 1, 0], [r, h, 1, 0], [r, h, 0, 1], [0, h, 0, 1]], 24);
  }

  function meshTris(g) {
    const out = [], v = g.v;
    for (let t = 0; t + 2 < g.idx.length; t += 3) {
      const a = [v[3 * g.idx[t]], v[3 * g.idx[t] + 1], v[3 * g.idx[t] + 2]];
      const b = [v[3 * g.idx[t + 1]], v[3 * g.idx[t + 1] + 1], v[3 * g.idx[t + 1] + 2]];
      const c = [v[3 * g.idx[t + 2]], v[3 * g.idx[t + 2] + 1], v[3 * g.idx[t + 2] + 2]];
      pushTri(out, a, b, c, faceNormal(a, b, c));
    }
    return out;
  }

  // ---- run pages: the viewer -----------------------------------------------------------------

  const VS = 'attribute vec3 aPos; attribute vec3 aNrm; uniform mat4 uViewProj; uniform mat4 uModel;' +
    'varying vec3 vN; void main() { gl_Position = uViewProj * uModel * vec4(aPos, 1.0);' +
    ' vN = (uModel * vec4(aNrm, 0.0)).xyz; }';
  const FS = 'precision mediump float; varying vec3 vN; uniform vec4 uColor; uniform float uLit;' +
    'void main() { vec3 n = normalize(vN + vec3(0.0, 0.0, 1e-6));' +
    ' float d = abs(dot(n, normalize(vec3(0.35, 0.85, 0.4))));' +
    ' float l = mix(1.0, 0.32 + 0.68 * d, uLit); gl_FragColor = vec4(uColor.rgb * l, uColor.a); }';

  const COLORS = {
    Dynamic: [0.91, 0.52, 0.23, 1], asleep: [0.55, 0.45, 0.37, 1], Static: [0.55, 0.58, 0.62, 1],
    Kinematic: [0.29, 0.56, 0.85, 1], character: [0.65, 0.4, 0.85, 1], sensor: [0.3, 0.85, 0.45, 0.22],
    picked: [1, 0.9, 0.3, 1], contact: [1, 0.95, 0.2, 1], plane: [0.3, 0.33, 0.37, 1],
    joint: [0.55, 0.85, 1, 1],
    grid: [0.4, 0.44, 0.5, 1] };

  function runPage() {
    const run = decodeRun();
    const { F, entities, events, eventStart } = run;
    $('run').hidden = false;
    if (F < 1) throw new Error('the page holds no frames');
    const stride = data.stride, hz = data.step_hz;
    const canvas = $('view');
    const gl = canvas.getContext('webgl', { antialias: true });
    if (!gl) throw new Error('WebGL is not available in this browser');

    function compile(type, src) {
      const s = gl.createShader(type);
      gl.shaderSource(s, src);
      gl.compileShader(s);
      if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error('shader: ' + gl.getShaderInfoLog(s));
      return s;
    }
    const prog = gl.createProgram();
    gl.attachShader(prog, compile(gl.VERTEX_SHADER, VS));
    gl.attachShader(prog, compile(gl.FRAGMENT_SHADER, FS));
    gl.linkProgram(prog);
    if (!gl.getProgramParameter(prog, gl.LINK_STATUS)) throw new Error('shader link: ' + gl.getProgramInfoLog(prog));
    gl.useProgram(prog);
    const aPos = gl.getAttribLocation(prog, 'aPos'), aNrm = gl.getAttribLocation(prog, 'aNrm');
    const uViewProj = gl.getUniformLocation(prog, 'uViewProj'), uModel = gl.getUniformLocation(prog, 'uModel');
    const uColor = gl.getUniformLocation(prog, 'uColor'), uLit = gl.getUniformLocation(prog, 'uLit');
    gl.enableVertexAttribArray(aPos);
    gl.enableVertexAttribArray(aNrm);

    function buffer(list, mode) {
      const b = gl.createBuffer();
      gl.bindBuffer(gl.ARRAY_BUFFER, b);
      gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(list), gl.STATIC_DRAW);
      return { b, count: list.length / 6, mode: mode === undefined ? gl.TRIANGLES : mode };
    }

    // Scene extent from the first frame each entity has, for the camera and the planes' size.
    let lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    for (const e of entities) {
      if (e.firstFrame < 0 || e.colliders.every((c) => c.shape === 'plane')) continue;
      const o = e.firstFrame * 10;
      for (let k = 0; k < 3; k++) {
        lo[k] = Math.min(lo[k], e.state[o + k] - 1);
        hi[k] = Math.max(hi[k], e.state[o + k] + 1);
      }
    }
    if (!(lo[0] <= hi[0])) { lo = [-5, -1, -5]; hi = [5, 3, 5]; }
    const center = [(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2];
    const radius = Math.max(3, Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]) / 2);

    const shapes = new Map();
    function shapeOf(c) {
      const key = JSON.stringify([c.shape, c.radius, c.height, c.size, c.geometry, c.normal, c.offset]);
      if (shapes.has(key)) return shapes.get(key);
      let tris = [], lines = null;
      if (c.shape === 'sphere') tris = lathe(sphereProfile(c.radius, 0, 0, Math.PI, 12), 20);
      else if (c.shape === 'box') tris = boxTris(c.size[0], c.size[1], c.size[2]);
      else if (c.shape === 'capsule') tris = capsuleTris(c.radius, c.height);
      else if (c.shape === 'cylinder') tris = cylinderTris(c.radius, c.height);
      else if ((c.shape === 'hull' || c.shape === 'mesh') && c.geometry >= 0 && run.geometries[c.geometry])
        tris = meshTris(run.geometries[c.geometry]);
      else if (c.shape === 'plane') {
        // A square of the scene's size around the point of the plane nearest the scene's centre.
        const n = c.normal, d = n[0] * center[0] + n[1] * center[1] + n[2] * center[2] - c.offset;
        const o = [center[0] - d * n[0], center[1] - d * n[1], center[2] - d * n[2]];
        const t = Math.abs(n[1]) < 0.9 ? [0, 1, 0] : [1, 0, 0];
        let u = [n[1] * t[2] - n[2] * t[1], n[2] * t[0] - n[0] * t[2], n[0] * t[1] - n[1] * t[0]];
        const ul = Math.hypot(...u); u = u.map((x) => x / ul);
        const v = [n[1] * u[2] - n[2] * u[1], n[2] * u[0] - n[0] * u[2], n[0] * u[1] - n[1] * u[0]];
        const s = Math.ceil(radius * 1.6);
        const P = (a, b) => [o[0] + a * u[0] + b * v[0], o[1] + a * u[1] + b * v[1], o[2] + a * u[2] + b * v[2]];
        const below = [-n[0] * 0.002, -n[1] * 0.002, -n[2] * 0.002];
        const Q = (a, b) => P(a, b).map((x, k) => x + below[k]);
        pushTri(tris, Q(-s, -s), Q(s, -s), Q(s, s), n);
        pushTri(tris, Q(-s, -s), Q(s, s), Q(-s, s), n);
        lines = [];
        for (let k = -s; k <= s; k += 1) {
          lines.push(...P(k, -s), ...n, ...P(k, s), ...n, ...P(-s, k), ...n, ...P(s, k), ...n);
        }
      }
      const shape = { tris: tris.length ? buffer(tris) : null, lines: lines ? buffer(lines, gl.LINES) : null,
                      plane: c.shape === 'plane' };
      shapes.set(key, shape);
      return shape;
    }
    for (const e of entities) {
      e.parts = e.colliders.map((c) => ({ c, shape: shapeOf(c),
        local: poseMatrix(c.pose[0], c.pose[1], c.pose[2], c.pose[3], c.pose[4], c.pose[5], c.pose[6]),
        world: c.shape === 'plane' }));
    }

    // Joints: each anchor in its body's frame as the body stood when it first appeared.
    function toLocal(e, p) {
      const o = e.firstFrame * 10, s = e.state;
      const d = [p[0] - s[o], p[1] - s[o + 1], p[2] - s[o + 2]];
      const m = poseMatrix(0, 0, 0, s[o + 6], s[o + 7], s[o + 8], s[o + 9]);
      return [0, 1, 2].map((k) => m[4 * k] * d[0] + m[4 * k + 1] * d[1] + m[4 * k + 2] * d[2]);
    }
    function toWorld(e, f, l) {
      const o = f * 10, s = e.state;
      const m = poseMatrix(s[o], s[o + 1], s[o + 2], s[o + 6], s[o + 7], s[o + 8], s[o + 9]);
      return [0, 1, 2].map((k) => m[k] * l[0] + m[4 + k] * l[1] + m[8 + k] * l[2] + m[12 + k]);
    }
    const joints = data.joints.filter((j) => entities[j.a] && entities[j.a].firstFrame >= 0 && j.first >= 0).map((j) => {
      const a = entities[j.a], b = j.b >= 0 && entities[j.b] && entities[j.b].firstFrame >= 0 ? entities[j.b] : null;
      return { j, a, b, la: toLocal(a, j.anchor), lb: b ? toLocal(b, j.anchor) : j.anchor };
    });

    const cam = { yaw: 0.65, pitch: 0.5, dist: radius * 1.7, target: center.slice() };
    let frame = 0, playing = false, picked = -1, lastDrawn = -1;
    const pickSelect = $('pick');

    function colorOf(e, f, part) {
      if (e.index === picked) return COLORS.picked;
      if (part.c.sensor || e.body === 'Trigger') return COLORS.sensor;
      if (part.shape.plane) return COLORS.plane;
      if (e.character) return COLORS.character;
      if (e.body === 'Dynamic') return e.awake[f] ? COLORS.Dynamic : COLORS.asleep;
      return COLORS[e.body] || COLORS.Static;
    }

    function viewProj() {
      const w = canvas.width, h = canvas.height;
      const cp = Math.cos(cam.pitch);
      const eye = [cam.target[0] + cam.dist * cp * Math.sin(cam.yaw), cam.target[1] + cam.dist * Math.sin(cam.pitch),
                   cam.target[2] + cam.dist * cp * Math.cos(cam.yaw)];
      cam.eye = eye;
      return mul(perspective(0.8, w / Math.max(1, h), cam.dist * 0.01, cam.dist * 20 + radius * 4),
                 lookAt(eye, cam.target, [0, 1, 0]));
    }

    function bindShape(buf) {
      gl.bindBuffer(gl.ARRAY_BUFFER, buf.b);
      gl.vertexAttribPointer(aPos, 3, gl.FLOAT, false, 24, 0);
      gl.vertexAttribPointer(aNrm, 3, gl.FLOAT, false, 24, 12);
    }

    const IDENTITY = poseMatrix(0, 0, 0, 0, 0, 0, 1);
    let contactBuffer = gl.createBuffer();

    function drawFrame(f) {
      const dpr = window.devicePixelRatio || 1;
      const w = Math.max(1, Math.round(canvas.clientWidth * dpr)), h = Math.max(1, Math.round(canvas.clientHeight * dpr));
      if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
      gl.viewport(0, 0, canvas.width, canvas.height);
      gl.clearColor(0.05, 0.06, 0.07, 1);
      gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
      gl.enable(gl.DEPTH_TEST);
      gl.uniformMatrix4fv(uViewProj, false, viewProj());
      const translucent = [];
      for (const e of entities) {
        if (!e.present[f]) continue;
        const o = f * 10, s = e.state;
        const body = poseMatrix(s[o], s[o + 1], s[o + 2], s[o + 6], s[o + 7], s[o + 8], s[o + 9]);
        let parts = 0;
        for (const part of e.parts) {
          const model = part.world ? IDENTITY : mul(body, part.local);
          const color = colorOf(e, f, part);
          if (color[3] < 1) { translucent.push([part, model, color]); parts++; continue; }
          gl.uniformMatrix4fv(uModel, false, model);
          if (part.shape.tris) {
            gl.uniform4fv(uColor, color);
            gl.uniform1f(uLit, 1);
            bindShape(part.shape.tris);
            gl.drawArrays(gl.TRIANGLES, 0, part.shape.tris.count);
            parts++;
          }
          if (part.shape.lines) {
            gl.uniform4fv(uColor, COLORS.grid);
            gl.uniform1f(uLit, 0);
            bindShape(part.shape.lines);
            gl.drawArrays(gl.LINES, 0, part.shape.lines.count);
          }
        }
        if (parts === e.parts.length) e.draws++;
      }
      // Contacts of this frame: the point and a short normal; live joints: body, anchor, body.
      const lines = [], jointLines = [];
      const size = radius * 0.012;
      for (const x of joints) {
        if (f < x.j.first || f > x.j.last || !x.a.present[f]) continue;
        const o = f * 10, pa = [x.a.state[o], x.a.state[o + 1], x.a.state[o + 2]];
        const wa = toWorld(x.a, f, x.la);
        const wb = x.b ? (x.b.present[f] ? toWorld(x.b, f, x.lb) : wa) : x.lb;
        jointLines.push(...pa, 0, 0, 1, ...wa, 0, 0, 1, ...wa, 0, 0, 1, ...wb, 0, 0, 1);
        if (x.b && x.b.present[f]) jointLines.push(...wb, 0, 0, 1, x.b.state[o], x.b.state[o + 1], x.b.state[o + 2], 0, 0, 1);
        for (let k = 0; k < 3; k++) {
          const p = wb.slice(), q = wb.slice();
          p[k] -= size * 1.5; q[k] += size * 1.5;
          jointLines.push(...p, 0, 0, 1, ...q, 0, 0, 1);
        }
      }
      for (let i = eventStart[f]; i < eventStart[f + 1]; i++) {
        const ev = events[i];
        if (!ev.point) continue;
        const p = ev.point, n = ev.normal;
        lines.push(...p, 0, 0, 1, p[0] + n[0] * size * 4, p[1] + n[1] * size * 4, p[2] + n[2] * size * 4, 0, 0, 1);
        for (let k = 0; k < 3; k++) {
          const a = p.slice(), b = p.slice();
          a[k] -= size; b[k] += size;
          lines.push(...a, 0, 0, 1, ...b, 0, 0, 1);
        }
      }
      for (const [list, color] of [[jointLines, COLORS.joint], [lines, COLORS.contact]]) {
        if (!list.length) continue;
        gl.disable(gl.DEPTH_TEST);
        gl.uniformMatrix4fv(uModel, false, IDENTITY);
        gl.uniform4fv(uColor, color);
        gl.uniform1f(uLit, 0);
        gl.bindBuffer(gl.ARRAY_BUFFER, contactBuffer);
        gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(list), gl.DYNAMIC_DRAW);
        gl.vertexAttribPointer(aPos, 3, gl.FLOAT, false, 24, 0);
        gl.vertexAttribPointer(aNrm, 3, gl.FLOAT, false, 24, 12);
        gl.drawArrays(gl.LINES, 0, list.length / 6);
        gl.enable(gl.DEPTH_TEST);
      }
      if (translucent.length) {
        gl.enable(gl.BLEND);
        gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
        gl.depthMask(false);
        gl.uniform1f(uLit, 1);
        for (const [part, model, color] of translucent) {
          if (!part.shape.tris) continue;
          gl.uniformMatrix4fv(uModel, false, model);
          gl.uniform4fv(uColor, color);
          bindShape(part.shape.tris);
          gl.drawArrays(gl.TRIANGLES, 0, part.shape.tris.count);
        }
        gl.depthMask(true);
        gl.disable(gl.BLEND);
      }
      lastDrawn = f;
      counted();
    }

    // ---- timeline, plots, panels ----
    const tl = $('timeline');
    const lastTick = Math.max(1, (F - 1) * stride);
    const expects = data.expects;
    const otherKinds = data.event_kinds.map((k) => k.kind).filter((k) => !['enter', 'stay', 'exit'].includes(k));
    function drawTimeline() {
      const { g, w, h } = sizeCanvas(tl);
      g.clearRect(0, 0, w, h);
      const left = 70, right = 10;
      const X = (t) => left + (t / lastTick) * (w - left - right);
      const rows = { contacts: 18, other: 44, expects: 70 };
      g.font = '10px system-ui, sans-serif';
      g.fillStyle = '#8a93a0';
      g.fillText('contacts', 6, rows.contacts + 4);
      g.fillText(otherKinds.length ? otherKinds.join(', ').slice(0, 12) : 'other', 6, rows.other + 4);
      g.fillText('expects', 6, rows.expects + 4);
      const cols = Math.max(1, Math.floor(w - left - right));
      const stay = new Float32Array(cols), enter = new Uint8Array(cols), exit = new Uint8Array(cols), other = new Uint8Array(cols);
      for (const ev of events) {
        const c = Math.min(cols - 1, Math.max(0, Math.floor((ev.tick / lastTick) * (cols - 1))));
        if (ev.kind === 'stay') stay[c]++;
        else if (ev.kind === 'enter') enter[c] = 1;
        else if (ev.kind === 'exit') exit[c] = 1;
        else other[c] = 1;
      }
      const peak = Math.max(1, ...stay);
      for (let c = 0; c < cols; c++) {
        if (stay[c]) { g.fillStyle = 'rgba(255,240,80,' + (0.15 + 0.6 * stay[c] / peak) + ')'; g.fillRect(left + c, rows.contacts - 2, 1, 4); }
        if (enter[c]) { g.fillStyle = '#4cc36a'; g.fillRect(left + c, rows.contacts - 10, 1, 8); }
        if (exit[c]) { g.fillStyle = '#e5534b'; g.fillRect(left + c, rows.contacts + 2, 1, 8); }
        if (other[c]) { g.fillStyle = '#b48ce6'; g.fillRect(left + c, rows.other - 6, 1, 12); }
      }
      for (const x of expects) {
        const px = X(Math.min(x.tick, lastTick));
        g.fillStyle = x.passed === true ? '#4cc36a' : x.passed === false ? '#e5534b' : '#8a93a0';
        g.beginPath(); g.moveTo(px, rows.expects - 7); g.lineTo(px + 5, rows.expects + 5); g.lineTo(px - 5, rows.expects + 5);
        g.closePath(); g.fill();
      }
      g.fillStyle = '#8a93a0';
      for (let s = 0, step = niceStep(lastTick / hz); s <= lastTick / hz + 1e-9; s += step) {
        g.fillRect(X(s * hz), rows.expects + 8, 1, h - rows.expects - 10);
        g.fillText(fmtAxis(s) + ' s', X(s * hz) + 3, h - 2);
      }
      g.strokeStyle = '#ffffff';
      g.beginPath(); g.moveTo(X(frame * stride) + 0.5, 2); g.lineTo(X(frame * stride) + 0.5, h - 12); g.stroke();
      tl.toFrame = (clientX) => {
        const r = tl.getBoundingClientRect();
        const t = ((clientX - r.left - left) / (w - left - right)) * lastTick;
        return Math.round(Math.min(lastTick, Math.max(0, t)) / stride);
      };
    }
    function niceStep(span) {
      const raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(raw || 1)));
      for (const m of [1, 2, 5, 10]) if (raw <= m * p) return m * p;
      return 10 * p;
    }

    function series(e, k) {
      const out = new Array(F);
      for (let f = 0; f < F; f++) out[f] = e.present[f] ? e.state[f * 10 + k] : null;
      return out;
    }
    let plotted = -2, plotData = null;
    function drawPlots() {
      const e = entities[picked];
      if (!e) return;
      if (plotted !== picked) {
        plotData = { pos: [0, 1, 2].map((k) => series(e, k)), vel: [3, 4, 5].map((k) => series(e, k)) };
        plotted = picked;
      }
      const marks = expects.filter((x) => x.label === e.name).map((x) => ({
        x: Math.min(F - 1, x.tick / stride), color: x.passed === true ? '#4cc36a' : x.passed === false ? '#e5534b' : '#8a93a0' }));
      const opts = { cursor: frame, marks, xLabel: '0 … ' + fmt(lastTick / hz, 2) + ' s' };
      plotLines($('plot-pos'), F, plotData.pos.map((v, k) => ({ values: v, color: AXIS[k] })), opts);
      plotLines($('plot-vel'), F, plotData.vel.map((v, k) => ({ values: v, color: AXIS[k] })), opts);
      for (const p of seriesPlots) {
        const s0 = p.members[0], bins = s0.mean.length;
        const bin = Math.min(bins - 1, Math.floor(((frame * stride) / hz / s0.duration) * bins));
        const lines = p.group === null
          ? [{ values: s0.max, color: '#9cc8ff' }, { values: s0.mean, color: '#2f7fe0' }]
          : p.members.map((s, k) => ({ values: s.mean, color: GROUP_COLOURS[k % GROUP_COLOURS.length] }));
        plotLines(p.canvas, bins, lines, { cursor: bin, gate: s0.gate, connect: p.group !== null,
          xLabel: '0 … ' + fmt(s0.duration, 2) + ' s' });
        if (p.readout) {
          p.readout.forEach((span, k) => {
            const s = p.members[k];
            let v = null;
            for (let b = bin; b >= 0 && v === null; b--) v = s.mean[b];
            span.textContent = s.name + ' ' + (v === null ? '–' : v.toLocaleString('en-US', { maximumFractionDigits: 2 }));
          });
        }
      }
      const o = frame * 10;
      $('readout').textContent = e.present[frame]
        ? 'p (' + [0, 1, 2].map((k) => fmt(e.state[o + k])).join(', ') + ')  v (' +
          [3, 4, 5].map((k) => fmt(e.state[o + k])).join(', ') + ')  ' + e.body +
          (e.body === 'Dynamic' ? (e.awake[frame] ? ', awake' : ', asleep') : '')
        : 'not present in this frame';
    }

    function drawEventsNow() {
      const div = $('events-now');
      div.textContent = '';
      const n = eventStart[frame + 1] - eventStart[frame];
      for (let i = eventStart[frame]; i < eventStart[frame + 1] && i < eventStart[frame] + 40; i++) {
        const ev = events[i];
        const line = document.createElement('div');
        const name = (k) => (k >= 0 && entities[k] ? entities[k].name : '–');
        line.textContent = ev.kind + ' ' + name(ev.a) + (ev.b >= 0 ? ' · ' + name(ev.b) : '') +
          (ev.point ? ' at (' + ev.point.map((v) => fmt(v, 2)).join(', ') + ')' : '');
        div.append(line);
      }
      if (n > 40) div.append('… ' + (n - 40) + ' more');
      if (n === 0) div.textContent = 'none';
    }

    function fillExpects() {
      const table = $('expects');
      if (!expects.length) { table.textContent = 'none in this scene'; return; }
      for (const x of expects) {
        const tr = document.createElement('tr');
        tr.className = 'expect';
        const mark = x.passed === true ? ['pass', 'held'] : x.passed === false ? ['fail', 'FAILED'] : ['none', 'not reached'];
        for (const [text, cls] of [[fmt(x.at, 2) + ' s', ''], [x.label, ''], [mark[1], mark[0]]]) {
          const td = document.createElement('td');
          td.textContent = text;
          if (cls) td.className = cls;
          tr.append(td);
        }
        tr.title = x.detail;
        tr.addEventListener('click', () => { seek(Math.min(F - 1, Math.round(x.tick / stride))); const k = entities.findIndex((e) => e.name === x.label); if (k >= 0) pick(k); });
        table.append(tr);
      }
    }

    function legend() {
      const items = [['Dynamic', COLORS.Dynamic], ['asleep', COLORS.asleep], ['Static', COLORS.Static],
        ['Kinematic', COLORS.Kinematic], ['character', COLORS.character], ['sensor', COLORS.sensor], ['contact', COLORS.contact], ['joint', COLORS.joint]];
      const el = $('legend');
      for (const [name, c] of items) {
        const i = document.createElement('i');
        i.style.background = 'rgb(' + c.slice(0, 3).map((x) => Math.round(x * 255)).join(',') + ')';
        el.append(i, name);
      }
    }

    function refresh() {
      drawFrame(frame);
      drawTimeline();
      drawPlots();
      drawEventsNow();
      $('scrub').value = String(frame);
      $('clock').textContent = 't = ' + fmt((frame * stride) / hz, 3) + ' s  (frame ' + frame + ' / ' + (F - 1) + ')';
    }
    let pending = false;
    function redraw() {
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => { pending = false; refresh(); });
    }
    function seek(f) { frame = Math.max(0, Math.min(F - 1, f)); redraw(); }
    function pick(k) { picked = k; pickSelect.value = String(k); redraw(); }

    for (const e of entities) {
      const opt = document.createElement('option');
      opt.value = String(e.index);
      opt.textContent = e.name + ' (' + (e.character ? 'character' : e.body) + ')' + (e.firstFrame < 0 ? ' – no frames' : '');
      pickSelect.append(opt);
    }
    pickSelect.addEventListener('change', () => pick(Number(pickSelect.value)));
    const firstMoving = entities.find((e) => e.body === 'Dynamic' && e.firstFrame >= 0) || entities[0];
    if (firstMoving) { picked = firstMoving.index; pickSelect.value = String(picked); }
    $('scrub').max = String(F - 1);
    $('scrub').addEventListener('input', () => { setPlaying(false); seek(Number($('scrub').value)); });

    // Play at the chosen speed in simulated time.
    let clock = 0, lastTime = 0;
    function setPlaying(on) {
      playing = on;
      $('play').textContent = on ? 'Pause' : 'Play';
      if (on) {
        if (frame >= F - 1) frame = 0;
        clock = frame;
        lastTime = performance.now();
        requestAnimationFrame(tick);
      }
    }
    function tick(now) {
      if (!playing) return;
      clock += ((now - lastTime) / 1000) * (hz / stride) * Number($('speed').value);
      lastTime = now;
      frame = Math.min(F - 1, Math.floor(clock));
      refresh();
      if (frame >= F - 1) setPlaying(false); else requestAnimationFrame(tick);
    }
    $('play').addEventListener('click', () => setPlaying(!playing));
    $('back').addEventListener('click', () => { setPlaying(false); seek(frame - 1); });
    $('fwd').addEventListener('click', () => { setPlaying(false); seek(frame + 1); });
    window.addEventListener('keydown', (ev) => {
      if (ev.target && (ev.target.tagName === 'SELECT' || ev.target.tagName === 'INPUT')) return;
      if (ev.key === ' ') { ev.preventDefault(); setPlaying(!playing); }
      else if (ev.key === 'ArrowLeft') { setPlaying(false); seek(frame - 1); }
      else if (ev.key === 'ArrowRight') { setPlaying(false); seek(frame + 1); }
    });
    let scrubbing = false;
    tl.addEventListener('pointerdown', (ev) => { scrubbing = true; setPlaying(false); seek(tl.toFrame(ev.clientX)); });
    window.addEventListener('pointermove', (ev) => { if (scrubbing) seek(tl.toFrame(ev.clientX)); });
    drawTimeline(); // defines tl.toFrame before any click
    window.addEventListener('pointerup', () => { scrubbing = false; });

    // Orbit, zoom, and click to pick (ray against each collider's bounding sphere).
    let drag = null;
    canvas.addEventListener('pointerdown', (ev) => { drag = { x: ev.clientX, y: ev.clientY, moved: 0 }; });
    window.addEventListener('pointermove', (ev) => {
      if (!drag) return;
      const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      drag.moved += Math.abs(dx) + Math.abs(dy);
      drag.x = ev.clientX; drag.y = ev.clientY;
      cam.yaw -= dx * 0.008;
      cam.pitch = Math.max(-1.45, Math.min(1.45, cam.pitch + dy * 0.008));
      redraw();
    });
    window.addEventListener('pointerup', (ev) => {
      if (drag && drag.moved < 4 && ev.target === canvas) pickAt(ev.clientX, ev.clientY);
      drag = null;
    });
    canvas.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      cam.dist = Math.max(radius * 0.05, Math.min(radius * 20, cam.dist * Math.exp(ev.deltaY * 0.001)));
      redraw();
    }, { passive: false });
    function boundRadius(c) {
      if (c.shape === 'sphere') return c.radius;
      if (c.shape === 'box') return Math.hypot(...c.size) / 2;
      if (c.shape === 'capsule' || c.shape === 'cylinder') return Math.hypot(c.radius, c.height / 2);
      if ((c.shape === 'hull' || c.shape === 'mesh') && run.geometries[c.geometry]) {
        const v = run.geometries[c.geometry].v;
        let r = 0;
        for (let i = 0; i < v.length; i += 3) r = Math.max(r, Math.hypot(v[i], v[i + 1], v[i + 2]));
        return r;
      }
      return 0;
    }
    function pickAt(cx, cy) {
      const r = canvas.getBoundingClientRect();
      viewProj(); // sets cam.eye
      // The ray from the eye through the point, from the camera's basis and field of view.
      const nx = ((cx - r.left) / r.width) * 2 - 1, ny = 1 - ((cy - r.top) / r.height) * 2;
      const eye = cam.eye, fz = [cam.target[0] - eye[0], cam.target[1] - eye[1], cam.target[2] - eye[2]];
      const fl = Math.hypot(...fz); fz.forEach((v, i) => { fz[i] = v / fl; });
      let rx = [fz[1] * 0 - fz[2] * 1, fz[2] * 0 - fz[0] * 0, fz[0] * 1 - fz[1] * 0];
      const rl = Math.hypot(...rx) || 1; rx = rx.map((v) => v / rl);
      const up = [rx[1] * fz[2] - rx[2] * fz[1], rx[2] * fz[0] - rx[0] * fz[2], rx[0] * fz[1] - rx[1] * fz[0]];
      const t = Math.tan(0.4), aspect = r.width / Math.max(1, r.height);
      const dir = [0, 1, 2].map((k) => fz[k] + nx * t * aspect * rx[k] + ny * t * up[k]);
      const dl = Math.hypot(...dir);
      const d = dir.map((v) => v / dl);
      let best = -1, bestT = Infinity;
      for (const e of entities) {
        if (!e.present[frame]) continue;
        const o = frame * 10;
        const body = poseMatrix(e.state[o], e.state[o + 1], e.state[o + 2], e.state[o + 6], e.state[o + 7], e.state[o + 8], e.state[o + 9]);
        for (const part of e.parts) {
          if (part.world) continue;
          const m = mul(body, part.local);
          const c = [m[12] - eye[0], m[13] - eye[1], m[14] - eye[2]];
          const along = c[0] * d[0] + c[1] * d[1] + c[2] * d[2];
          const rad = boundRadius(part.c);
          const miss = c[0] * c[0] + c[1] * c[1] + c[2] * c[2] - along * along;
          if (along > 0 && miss <= rad * rad && along < bestT) { bestT = along; best = e.index; }
        }
      }
      if (best >= 0) pick(best);
    }

    // Quantities over the run, each in a box above the expects: a series alone (bodies awake per
    // tick) with the mean and maximum of each bin; a group (the diagnostics) one line a series,
    // with a legend that reads the values at the current frame.
    const seriesPlots = [];
    for (const s of data.series) {
      const group = s.group === undefined ? null : s.group;
      const joined = group !== null && seriesPlots.find((p) => p.group === group);
      if (joined) { joined.members.push(s); continue; }
      seriesPlots.push({ group, members: [s] });
    }
    for (const p of seriesPlots) {
      const div = document.createElement('div');
      div.className = 'box';
      const h2 = document.createElement('h2');
      const units = [...new Set(p.members.map((s) => s.unit))];
      const title = p.group === null ? p.members[0].name : p.group;
      h2.textContent = title + (units.length === 1 && units[0] && units[0] !== title ? ' (' + units[0] + ')' : '');
      p.canvas = document.createElement('canvas');
      div.append(h2, p.canvas);
      if (p.group !== null) {
        const legend = document.createElement('div');
        legend.className = 'series-legend';
        p.readout = p.members.map((s, k) => {
          const span = document.createElement('span');
          span.style.color = GROUP_COLOURS[k % GROUP_COLOURS.length];
          legend.append(span);
          return span;
        });
        div.append(legend);
      }
      $('side').insertBefore(div, $('expects').parentNode);
    }
    legend();
    fillExpects();
    const dropped = data.event_kinds.filter((k) => k.dropped > 0).map((k) => k.dropped + ' ' + k.kind);
    if (dropped.length) {
      const span = document.createElement('span');
      span.append('not on the page ');
      const b = document.createElement('b');
      b.textContent = dropped.join(', ') + ' events (over ' + data.max_events_per_kind + ' of a kind)';
      span.append(b);
      $('info').append(span);
    }
    if (stride > 1) {
      const span = document.createElement('span');
      span.append('frames ');
      const b = document.createElement('b');
      b.textContent = 'every ' + stride + ' ticks';
      span.append(b);
      $('info').append(span);
    }
    window.addEventListener('resize', redraw);

    // The self-check: a sample of frames (first, last, every entity's first, an even spread).
    const sample = new Set([0, F - 1]);
    for (const e of entities) if (e.firstFrame >= 0) sample.add(e.firstFrame);
    for (let k = 1; k < 30; k++) sample.add(Math.round((k * (F - 1)) / 30));
    const order = [...sample].sort((a, b) => a - b);
    let at = 0;
    function checkSome() {
      try {
        for (let n = 0; n < 10 && at < order.length; n++, at++) {
          drawFrame(order[at]);
          const err = gl.getError();
          if (err !== gl.NO_ERROR) throw new Error('WebGL error ' + err + ' drawing frame ' + order[at]);
        }
        if (at < order.length) { setTimeout(checkSome, 0); return; }
        if (lastDrawn !== F - 1) throw new Error('the last frame was not reached');
        const px = new Uint8Array(4 * 64);
        const colors = new Set();
        for (let k = 0; k < 8; k++) {
          gl.readPixels(Math.floor((canvas.width * (k + 0.5)) / 8), 0, 1, Math.min(64, canvas.height), gl.RGBA, gl.UNSIGNED_BYTE, px);
          for (let i = 0; i < px.length; i += 4) colors.add(px[i] * 65536 + px[i + 1] * 256 + px[i + 2]);
        }
        const drawnAny = entities.some((e) => e.draws > 0);
        if (drawnAny && colors.size < 2) throw new Error('the scene drew as one flat colour');
        const missing = entities.filter((e) => e.firstFrame >= 0 && e.parts.length > 0 && e.draws === 0).map((e) => e.name);
        if (missing.length) throw new Error('not drawn: ' + missing.slice(0, 8).join(', ') + (missing.length > 8 ? ' …' : ''));
        frame = 0;
        refresh();
        finish();
      } catch (err) {
        problem(err.message);
      }
    }
    window.gyre = { seek: (f) => { setPlaying(false); frame = Math.max(0, Math.min(F - 1, f)); refresh(); },
                    pick: (name) => { const k = entities.findIndex((e) => e.name === name); if (k >= 0) pick(k); return k; },
                    frames: F,
                    // The plots of quantities over the run: each box's title and its series.
                    plots: () => seriesPlots.map((p) => ({ group: p.group, names: p.members.map((s) => s.name),
                      drawn: canvasHasInk(p.canvas) })),
                    // What the page decoded, for tests that compare it with --trace and --events.
                    events: () => events.map((ev) => ({ tick: ev.tick, kind: ev.kind,
                      a: ev.a >= 0 ? entities[ev.a].name : null, b: ev.b >= 0 ? entities[ev.b].name : null,
                      point: ev.point, normal: ev.normal })),
                    state: (name, f) => {
                      const e = entities.find((x) => x.name === name);
                      return e && e.present[f] ? Array.from(e.state.subarray(f * 10, f * 10 + 10)) : null;
                    } };
    setTimeout(checkSome, 0);
  }

  try {
    showInfo();
    if (data.format !== 'gyre.page' || data.version !== 1) throw new Error('not a gyre.page version 1 document');
    if (data.kind === 'soak') soakPage(); else runPage();
  } catch (err) {
    problem(err.message);
  }
})();
