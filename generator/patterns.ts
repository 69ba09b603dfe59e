/**
 * Allow-list patterns for every settings value that ends up in an nginx file. A value
 * passes only if it is made of characters that cannot end a directive (`;`), open or close
 * a block (`{` `}`), close a quoted string (`"` `'`), start a variable (`$`), escape (`\`)
 * or start a new line. The templates then quote values without any escaping of their own.
 */

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';

/** A DNS name: dot-separated labels of letters, digits and inner hyphens, at most 253 long. */
export const DNS_NAME = new RegExp(`^(?=.{1,253}$)${LABEL}(?:\\.${LABEL})*$`);

/** A dotted IPv4 address, which is not a DNS name for certificate purposes. */
export const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/** `host:port` with a DNS name, an IPv4 address or a bracketed IPv6 address. */
export const HOST_PORT = new RegExp(
  `^(?:${LABEL}(?:\\.${LABEL})*|\\d{1,3}(?:\\.\\d{1,3}){3}|\\[[0-9A-Fa-f:.]+\\]):(\\d{1,5})$`,
);

/** A Unix domain socket as nginx spells it in an upstream: `unix:/absolute/path`. */
export const UNIX_SOCKET = /^unix:\/[A-Za-z0-9._/@+,=~-]+$/;

/** Characters allowed in URLs: RFC 3986 unreserved, reserved and `%`, without `;` and `'`. */
export const URL_TEXT = /^[A-Za-z0-9._~:/?#[\]@!&()*+,=%-]+$/;

/** A token such as a claim name or an audience: URL characters, without `;` and quotes. */
export const TOKEN = /^[A-Za-z0-9._~:/?#[\]@!&()*+,=%-]{1,256}$/;

/** OAuth scopes separated by single spaces, e.g. `openid profile` (rendered quoted). */
export const SCOPE_LIST = /^[A-Za-z0-9._:/-]{1,128}(?: [A-Za-z0-9._:/-]{1,128}){0,15}$/;

/** An OpenSSL cipher string, e.g. `HIGH:!aNULL:!MD5` or `DEFAULT@SECLEVEL=2`. */
export const CIPHER_LIST = /^[A-Za-z0-9!+@=:._-]{1,2048}$/;

/** An absolute POSIX path; spaces are allowed because paths are always rendered quoted. */
export const ABSOLUTE_PATH = /^\/[A-Za-z0-9._/@+,=~ -]*$/;

/** A system user or group name, for nginx's `user` directive. */
export const USER_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,31}$/;
