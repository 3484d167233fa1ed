// A small line plot on a <canvas>: one or two series over time, y from 0 to the largest value (a limit line
// included), a label with the last values, and dashed horizontal lines for limits (QoS). No library. Draws at the
// canvas' CSS size times devicePixelRatio.
"use strict";

/**
 * @param canvas  the <canvas>
 * @param series  [{values: [numbers], color: css color}]
 * @param times   [epoch ms], same length as the values
 * @param format  value -> text for the axis maximum
 * @param limits  [{value: number > 0, label: text}]: dashed lines (optional)
 */
function drawPlot(canvas, series, times, format, limits) {
  limits = limits || [];
  const ratio = window.devicePixelRatio || 1;
  const w = Math.max(100, Math.round(canvas.clientWidth * ratio));
  const h = Math.max(40, Math.round(canvas.clientHeight * ratio));
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
  }
  const g = canvas.getContext("2d");
  g.clearRect(0, 0, w, h);
  let max = 0;
  for (const s of series) for (const v of s.values) if (v > max) max = v;
  for (const l of limits) if (l.value > max) max = l.value;
  const top = 14 * ratio, bottom = h - 2 * ratio, left = 2 * ratio, right = w - 2 * ratio;
  g.strokeStyle = "#d9dee3";
  g.lineWidth = 1;
  g.beginPath();
  g.moveTo(left, bottom); g.lineTo(right, bottom);
  g.moveTo(left, top); g.lineTo(right, top);
  g.stroke();
  g.fillStyle = "#6b7682";
  g.font = (11 * ratio) + "px system-ui, sans-serif";
  g.fillText("max " + format(max), left + 2 * ratio, top - 3 * ratio);
  const n = times.length;
  if (n < 2) {
    g.fillText("waiting for samples…", w / 2 - 50 * ratio, (top + bottom) / 2);
    return;
  }
  const t0 = times[0], t1 = times[n - 1];
  const x = t => left + (right - left) * (t1 === t0 ? 1 : (t - t0) / (t1 - t0));
  const y = v => bottom - (bottom - top) * (max > 0 ? v / max : 0);
  g.setLineDash([4 * ratio, 3 * ratio]);
  for (const l of limits) {
    g.strokeStyle = "#c0392b";
    g.lineWidth = 1 * ratio;
    g.beginPath(); g.moveTo(left, y(l.value)); g.lineTo(right, y(l.value)); g.stroke();
    g.fillStyle = "#c0392b";
    g.fillText(l.label, right - g.measureText(l.label).width - 2 * ratio, Math.max(top + 10 * ratio, y(l.value) - 3 * ratio));
  }
  g.setLineDash([]);
  for (const s of series) {
    g.strokeStyle = s.color;
    g.lineWidth = 1.5 * ratio;
    g.beginPath();
    s.values.forEach((v, i) => (i === 0 ? g.moveTo(x(times[i]), y(v)) : g.lineTo(x(times[i]), y(v))));
    g.stroke();
  }
}
