/**
 * The auth frame's own names: the one hop's framing of the same question and answer
 * (sidecar/frames/auth-frame.ts, lua/gateway/sidecar/auth_frame.lua).
 */

/**
 * A question's number on its auth-frame connection (lua/gateway/sidecar/mux.lua): the sidecar
 * sends it back with the answer, and answers a numbered question as soon as it is decided,
 * not behind a slower one asked before it.
 */
export const FRAME_QUESTION_HEADER = 'X-Gateway-Question';

/**
 * The auth frame's marker (sidecar/frames/auth-frame.ts, lua/gateway/sidecar/auth_frame.lua): a
 * question starts with it and a line feed, an answer's first line with it and a space.
 */
export const FRAME_MARKER = 'GWA1';
