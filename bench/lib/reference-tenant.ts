/** The fixed key and category of bench/reference-same-work-server.ts, so the harness needs no setup call. */
export const REFERENCE_KEY = `wo_${'r'.repeat(52)}`;
export const REFERENCE_CATEGORY = 'cat_01JD3Q4W8Y6V3C0M2ZP4K7N9XA';
