const ID_PATTERN = /^[1-9][0-9]{0,15}$/;

/** A positive integer in canonical form (no sign, no leading zero) below 2^53. */
export function parseId(text: string): number | null {
  if (!ID_PATTERN.test(text)) return null;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : null;
}
