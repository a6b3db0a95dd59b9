/**
 * The peak level of the site plan (site-solve.ts): the cap P on every slot's import that
 * minimises C(P) + κ·max(P, floor), where C(P) is the plan's optimum under that cap (one DP pass
 * per evaluation). Pure arithmetic.
 */

/**
 * Minimises a convex φ over [lo, b], evaluating it on [a, b] (a ≥ lo: φ may be inexact or
 * undefined below a). Derivative-free cutting planes: for a convex function, the line through
 * two evaluated points bounds it from below outside the pair, so around the best point the
 * lines of its neighbouring pairs give a lower bound; the next point is where those lines
 * meet (on a piecewise-linear φ that is the kink itself), or a step towards an end that has
 * only one line. Stops when the best value is within `relTol` of the lower bound. Returns
 * the best point, the gap and the number of evaluations.
 */
export function minimizeConvex(phi: (x: number) => number, lo: number, a: number, b: number, relTol = 1e-10): { x: number; gap: number; evals: number } {
  if (!(b > a)) return { x: a, gap: 0, evals: 0 };
  const xs = [a, (a + b) / 2, b];
  const fs = xs.map(phi);
  let evals = 3;
  const minStep = 1e-9 * (b - a);
  const line = (i: number, x: number) => fs[i] + ((fs[i + 1] - fs[i]) / (xs[i + 1] - xs[i])) * (x - xs[i]);
  let gap = Infinity;
  let best = 0;
  for (; evals < 64; evals++) {
    best = 0;
    for (let i = 1; i < xs.length; i++) if (fs[i] < fs[best]) best = i;
    const tol = relTol * Math.max(Math.abs(fs[best]), 1e-9);
    // lower bound and next point on each side of the best point
    let lower = Infinity;
    let next = NaN;
    for (const p of [best - 1, best]) {
      const q = p + 1;
      if (p < 0 || q >= xs.length) continue;
      const left = p >= 1; // the line of (p−1, p), valid right of p
      const right = q + 1 < xs.length; // the line of (q, q+1), valid left of q
      let lb: number;
      let x: number;
      if (left && right) {
        const s1 = (fs[p] - fs[p - 1]) / (xs[p] - xs[p - 1]);
        const s2 = (fs[q + 1] - fs[q]) / (xs[q + 1] - xs[q]);
        x = s2 > s1 ? (fs[q] - fs[p] + s1 * xs[p] - s2 * xs[q]) / (s1 - s2) : NaN;
        if (!(x > xs[p] && x < xs[q])) x = (xs[p] + xs[q]) / 2;
        lb = Math.min(Math.max(line(p - 1, x), line(q, x)), fs[p], fs[q]);
      } else if (right) {
        // the left end: only the line of (q, q+1); when a is the best point it bounds [lo, a] as well
        lb = Math.min(line(q, best === 0 ? Math.min(xs[p], lo) : xs[p]), line(q, xs[p]), fs[q]);
        x = xs[p] + (xs[q] - xs[p]) / 8;
      } else if (left) {
        lb = Math.min(line(p - 1, xs[q]), fs[p]);
        x = xs[q] - (xs[q] - xs[p]) / 8;
      } else {
        lb = -Infinity;
        x = (xs[p] + xs[q]) / 2;
      }
      if (lb < lower) {
        lower = lb;
        next = x;
      }
    }
    gap = fs[best] - lower;
    if (gap <= tol) break;
    // a new point, not closer than minStep to one already evaluated
    let at = 0;
    while (at < xs.length && xs[at] < next) at++;
    if ((at > 0 && next - xs[at - 1] < minStep) || (at < xs.length && xs[at] - next < minStep)) break;
    xs.splice(at, 0, next);
    fs.splice(at, 0, phi(next));
  }
  return { x: xs[best], gap: Math.max(0, gap), evals };
}

/**
 * The cap of least C(P) + κ·max(P, floor) over [a, b], C nonincreasing (+∞ where the DP finds
 * no plan): branch and bound with the bound C(hi) + κ·max(lo, floor) on each interval.
 */
export function bestCap(C: (P: number) => number, kappa: number, floor: number, a: number, b: number, relTol = 1e-6): { x: number; gap: number; evals: number } {
  const phi = (P: number, c: number) => c + kappa * Math.max(P, floor);
  const ca = C(a);
  const cb = C(b);
  let evals = 2;
  let x = phi(b, cb) <= phi(a, ca) ? b : a;
  let best = Math.min(phi(a, ca), phi(b, cb));
  type Box = { lo: number; hi: number; clo: number; chi: number; bound: number };
  const boxes: Box[] = [{ lo: a, hi: b, clo: ca, chi: cb, bound: phi(a, cb) }];
  const scale = Math.max(1e-9, Math.abs(best), kappa * b);
  let gap = 0;
  while (boxes.length) {
    let j = 0;
    for (let i = 1; i < boxes.length; i++) if (boxes[i].bound < boxes[j].bound) j = i;
    const box = boxes[j];
    gap = best - box.bound;
    if (gap <= relTol * scale || evals >= 300 || box.hi - box.lo <= 1e-12 * Math.max(1, b)) break;
    boxes.splice(j, 1);
    const mid = (box.lo + box.hi) / 2;
    const cm = C(mid);
    evals++;
    if (phi(mid, cm) < best) {
      best = phi(mid, cm);
      x = mid;
    }
    for (const nb of [{ lo: box.lo, hi: mid, clo: box.clo, chi: cm }, { lo: mid, hi: box.hi, clo: cm, chi: box.chi }]) {
      const bound = phi(nb.lo, nb.chi);
      if (bound < best - relTol * scale) boxes.push({ ...nb, bound });
    }
    if (!boxes.length) gap = 0;
  }
  return { x, gap: Math.max(0, gap), evals };
}
