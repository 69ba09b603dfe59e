// Times as the operator reads them: local time with its zone named, so a screenshot or a
// message copied elsewhere still says which time it was.
// Fields one by one: dateStyle and timeStyle may not be combined with timeZoneName.
const FORMAT = {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  timeZoneName: 'short',
};

/** An RFC 3339 time in local time with its zone, or a dash. */
export function when(value) {
  return value ? new Date(value).toLocaleString(undefined, FORMAT) : '—';
}
