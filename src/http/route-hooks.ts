/** A route option's hooks (`onSend`, `preHandler`, …: one, several or none) as a list, to add one to. */
export function hookList<H>(hooks: H | H[] | undefined): H[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}
