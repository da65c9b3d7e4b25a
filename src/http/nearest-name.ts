/**
 * The known name a misspelt one most likely meant (`stauts` → `status`, `categoryid` →
 * `categoryId`), or undefined when none is close. Closeness is the optimal-string-alignment distance
 * (Damerau–Levenshtein without moving a letter twice: one insertion, deletion, substitution or swap
 * of neighbours each), ignoring case. A name may be this far from what it meant: a third of its
 * letters, at least one, and never all of the shorter one (`x` does not mean `q`). Ties go to the
 * first known name.
 */
export function nearestName(name: string, known: Iterable<string>): string | undefined {
  const allowed = Math.max(1, Math.floor(name.length / 3));
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = alignmentDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance > allowed || distance >= Math.min(name.length, candidate.length)) continue;
    if (!best || distance < best.distance) best = { candidate, distance };
  }
  return best?.candidate;
}

/** Optimal string alignment distance between `a` and `b`, in three rows of the usual table. */
export function alignmentDistance(a: string, b: string): number {
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_value, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = a[i - 1] === b[j - 1] ? 0 : 1;
      let distance = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + substitution);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) distance = Math.min(distance, beforePrevious[j - 2]! + 1);
      current.push(distance);
    }
    beforePrevious = previous;
    previous = current;
  }
  return previous[b.length]!;
}
