import type { Diagnosis, EngineError } from './errors.js';

/** The success envelope of every JSON call. */
export interface OkResult<T = unknown> {
  type: 'OKResult';
  status: 'OK';
  result: T;
  job: null;
  action: null;
}

/** The error envelope of every JSON call. */
export interface ErrorResult {
  type: 'ErrorResult';
  status: 'ERROR';
  error: {
    type: 'APIError';
    details: string;
    action: string | null;
    id: string;
    commandOutput: string | null;
    diagnoses: readonly Diagnosis[];
  };
}

/** Wraps a result; jobs do not exist in this engine, so `job` is always null. */
export function okResult<T>(result: T): OkResult<T> {
  return { type: 'OKResult', status: 'OK', result, job: null, action: null };
}

/** The one error body shape, built from an EngineError. */
export function errorResult(error: EngineError): ErrorResult {
  return {
    type: 'ErrorResult',
    status: 'ERROR',
    error: {
      type: 'APIError',
      details: error.message,
      action: error.action,
      id: error.id,
      commandOutput: null,
      diagnoses: error.diagnoses,
    },
  };
}
