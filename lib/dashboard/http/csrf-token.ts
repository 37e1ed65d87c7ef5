import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { DashboardRequest } from './dashboard-request';

/** The double-submit cookie: a page's forms carry its value back, a cross-site form cannot. */
export const CSRF_COOKIE = 'geneva_drive_csrf';
/** The header an API client sends the cookie's value in. */
export const CSRF_HEADER = 'x-csrf-token';
/** The form field that carries the token. */
export const CSRF_FIELD = '_csrf';

/** Why a write without a matching token is refused (403). */
export const CSRF_REFUSED =
  'The CSRF token is missing or does not match its cookie (a stale form, or a request from another site): reload the page and try again.';

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** One cookie of the Cookie header, or undefined (parsed here: no cookie-parser dependency). */
export function readCookie(request: DashboardRequest, name: string): string | undefined {
  const header = [request.headers.cookie ?? []].flat().join('; ');
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at === -1 || part.slice(0, at).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * The request's CSRF token, and the Set-Cookie header to send when it had none (or a malformed
 * one): a fresh 256-bit random token, HttpOnly and SameSite=Strict.
 */
export function csrfTokenFor(request: DashboardRequest): { token: string; setCookie?: string } {
  const existing = readCookie(request, CSRF_COOKIE);
  if (existing !== undefined && TOKEN_PATTERN.test(existing)) return { token: existing };
  const token = randomBytes(32).toString('base64url');
  return {
    token,
    setCookie: `${CSRF_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict`,
  };
}

/** Whether the submitted token equals the cookie's (compared in constant time). */
export function csrfTokenMatches(request: DashboardRequest, submitted: unknown): boolean {
  const cookie = readCookie(request, CSRF_COOKIE);
  if (cookie === undefined || !TOKEN_PATTERN.test(cookie) || typeof submitted !== 'string') {
    return false;
  }
  const a = Buffer.from(cookie);
  const b = Buffer.from(submitted);
  return a.length === b.length && timingSafeEqual(a, b);
}
