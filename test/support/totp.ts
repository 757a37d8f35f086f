// A code from an authenticator app: computed with otpauth from the base32 secret the account page shows.
import * as OTPAuth from 'otpauth';

export const codeAt = (secret: string, timestamp = Date.now()) => OTPAuth.TOTP.generate({ secret: OTPAuth.Secret.fromBase32(secret), timestamp });
