/** The slice of a list a caller asked for: the contract's `limit` and `offset`. */
export interface Page {
  limit: number;
  offset: number;
}
