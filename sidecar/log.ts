import { pino } from 'pino';

/**
 * The sidecar's one logger: a JSON object a line on stderr, so stdout stays for the bootstrap
 * key. `child` binds fields (the request id) to every line written through it.
 */
/** A debug line's fields, or a function that makes them: called only when debug lines are written. */
export type DebugFields = Record<string, unknown> | (() => Record<string, unknown>);

export interface Logger {
  /**
   * Fields as a function on a hot path: /auth logs each decision at debug, and building that
   * object on every question while the level is info was 8 % of the sidecar's busy time.
   */
  debug(message: string, fields?: DebugFields): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

/** `LOG_LEVEL`'s values, from most to least verbose; `silent` writes nothing. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Reads `LOG_LEVEL` (default info); an unknown value is an error, never a silent default. */
export function readLogLevel(value: string | undefined): LogLevel {
  const level = (value ?? '').trim().toLowerCase() || 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new Error(
      `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(value)}`,
    );
  }
  return level as LogLevel;
}

function wrap(logger: pino.Logger): Logger {
  // pino's argument order is (fields, message); ours reads message first, as every call site does.
  return {
    debug: (m, f) => {
      if (!logger.isLevelEnabled('debug')) return;
      logger.debug((typeof f === 'function' ? f() : f) ?? {}, m);
    },
    info: (m, f) => logger.info(f ?? {}, m),
    warn: (m, f) => logger.warn(f ?? {}, m),
    error: (m, f) => logger.error(f ?? {}, m),
    child: (fields) => wrap(logger.child(fields)),
  };
}

/**
 * A pino logger on stderr: `{"level":"info","time":"<ISO>","message":...,...fields}`. Written
 * synchronously, as the former hand-written one did: the line before a crash or an exit is
 * never lost in a buffer.
 */
export function createLogger(
  level: LogLevel = 'info',
  destination: pino.DestinationStream = pino.destination({ fd: 2, sync: true }),
): Logger {
  return wrap(
    pino(
      {
        level,
        messageKey: 'message',
        base: undefined,
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
      },
      destination,
    ),
  );
}

/** A debug line's fields as an object, whichever way they were given. */
export function debugFields(fields: DebugFields | undefined): Record<string, unknown> | undefined {
  return typeof fields === 'function' ? fields() : fields;
}

const nothing = () => {};
export const silentLogger: Logger = {
  debug: nothing,
  info: nothing,
  warn: nothing,
  error: nothing,
  child: () => silentLogger,
};
