/** A reading as the order check sees it: `item` is its position in the batch, undefined for a stored one. */
export interface OrderedReading {
  id: string;
  value: number;
  readAt: string;
  reset: boolean;
  item?: number | undefined;
}

/** A new reading that breaks a cumulative meter's order, and the neighbour it breaks it against. */
export interface Decrease {
  item: number;
  /** `below`: the item is lower than the reading before it; `above`: higher than the (stored) one after it. */
  side: 'below' | 'above';
  neighbour: OrderedReading;
}

/** Readings in the order a meter counts them: by readAt, then by id (ids sort by creation). */
export function compareReadings(a: Pick<OrderedReading, 'readAt' | 'id'>, b: Pick<OrderedReading, 'readAt' | 'id'>): number {
  if (a.readAt !== b.readAt) return a.readAt < b.readAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The decreases a batch would bring into a cumulative meter: merged with the stored readings around
 * it, every reading that is not a reset must be at least the one just before it. A pair of two stored
 * readings was checked when they were stored; a pair with a new reading is the new one's fault,
 * whichever side it is on (a late reading higher than the stored one after it is refused too).
 */
export function findDecreases(stored: readonly OrderedReading[], batch: readonly OrderedReading[]): Decrease[] {
  const merged = [...stored, ...batch].sort(compareReadings);
  const found: Decrease[] = [];
  for (let i = 1; i < merged.length; i++) {
    const previous = merged[i - 1]!;
    const current = merged[i]!;
    if (current.reset || current.value >= previous.value) continue;
    if (current.item !== undefined) found.push({ item: current.item, side: 'below', neighbour: previous });
    else if (previous.item !== undefined) found.push({ item: previous.item, side: 'above', neighbour: current });
  }
  return found.sort((a, b) => a.item - b.item);
}
