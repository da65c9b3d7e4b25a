/**
 * Every scope an API key can hold. Empty here: each feature declares its scopes with their help
 * text (`scopes` in its feature.ts) and adds their names here with
 * `declare module '../keys/scopes.js' { interface ScopeCatalogue extends Record<…> {} }`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by each feature
export interface ScopeCatalogue {}

export type Scope = keyof ScopeCatalogue & string;

/** The scopes assembled from the features, in their order, with the one-line explanation shown to operators. */
export class Scopes {
  readonly all: readonly Scope[];

  constructor(readonly descriptions: Readonly<Record<Scope, string>>) {
    this.all = Object.keys(descriptions) as Scope[];
  }

  has(value: string): value is Scope {
    return Object.hasOwn(this.descriptions, value);
  }
}
