/**
 * A timestamp as `Date.toISOString` writes it, in quotes. The milliseconds are computed as
 * node-postgres computes them (1000 times the fraction as a double, truncated), so both agree
 * even where that product falls just short of an integer (.029 gives 28).
 */
function isoSql(column: string): string {
  return `('"' || to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') || '.'
  || lpad(floor(1000 * ('0.' || to_char(${column} AT TIME ZONE 'UTC', 'US'))::float8)::int::text, 3, '0')
  || 'Z"')`;
}

/** A nullable timestamp: `null` without formatting anything (most rows have none). */
function orNull(column: string): string {
  return `CASE WHEN ${column} IS NULL THEN 'null' ELSE ${isoSql(column)} END`;
}

/**
 * One client as `toRecord` and JSON.stringify write it, byte for byte (a test compares them),
 * previous_key_expires_at null once the grace period is over, as toRecord shows it.
 */
export const RECORD_JSON_SQL = `'{"id":' || id || ',"api_key_id":' || id
  || ',"name":' || to_json(name)::text
  || ',"is_admin":' || is_admin::text
  || ',"api_client_id":' || COALESCE(to_json(api_client_id)::text, 'null')
  || ',"has_api_key":' || (key_hash IS NOT NULL)::text
  || ',"created_at":' || ${isoSql('created_at')}
  || ',"expires_at":' || ${orNull('expires_at')}
  || ',"last_used_at":' || ${orNull('last_used_at')}
  || ',"previous_key_expires_at":' || CASE
       WHEN previous_key_hash IS NOT NULL AND previous_key_expires_at > now()
       THEN ${isoSql('previous_key_expires_at')} ELSE 'null' END
  || ',"rate_limit":' || CASE WHEN rate_limit_requests IS NULL THEN 'null'
       ELSE '{"requests":' || rate_limit_requests || ',"per_seconds":' || rate_limit_per_seconds
            || '}' END
  || '}'`;
