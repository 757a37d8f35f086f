import { describe, expect, it } from 'vitest';
import { pageLanguage } from '../../src/web/pageLanguage.js';
import { contract } from '../../src/http/contract.js';
import { PAGE_LANGUAGES, WORD_KEYS, translator } from '../../src/web/i18n/catalogue.js';

describe("the pages' word catalogue", () => {
  it('bundles at least 12 languages, each with every word English has (translated), placeholders kept', () => {
    expect(PAGE_LANGUAGES.length).toBeGreaterThanOrEqual(12);
    expect(PAGE_LANGUAGES).toEqual(expect.arrayContaining(['en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'pl', 'tr', 'ru', 'zh', 'ja', 'ar', 'hi']));
    const values = {
      ...{ name: 'N', seconds: 3, company: 'C', language: 'L', ms: 5, elapsed: '0:01', max: '1:55', status: 418 },
      // the console's
      ...{ email: 'e', id: 'i', old: 'o', until: 'u', time: 't', org: 'O', count: 2, min: 1, days: 4, text: 'x', voice: 'v', amount: 'a' },
      ...{ label: 'l', from: 'f', to: 't', total: 'T', most: 'M', url: 'U', field: 'F', link: 'K', on: 'Y', role: 'R', secret: 'S', app: 'A' },
    };
    const english = translator('en');
    for (const language of PAGE_LANGUAGES.filter((code) => code !== 'en')) {
      const words = translator(language);
      expect(words.lang).toBe(language);
      const sameAsEnglish = WORD_KEYS.filter((key) => words.t(key, values) === english.t(key, values));
      // A few words are the same in some languages (Name, Support, Message; the console's Webhooks,
      // Sessions, Description): never a whole missing set.
      const pages = sameAsEnglish.filter((key) => !key.startsWith('console.'));
      expect(pages.length, `${language}: ${pages.join(', ')}`).toBeLessThanOrEqual(3);
      expect(sameAsEnglish.length - pages.length, `${language}: ${sameAsEnglish.join(', ')}`).toBeLessThanOrEqual(12);
      for (const key of WORD_KEYS) expect(words.t(key, values), `${language} ${key}`).not.toMatch(/\{\w+\}/);
    }
  });

  it('falls back to English for unknown languages and missing words; base language of a tag; Arabic right to left', () => {
    expect(translator('fi').lang).toBe('en');
    expect(translator(undefined).t('call.join')).toBe('Join');
    expect(translator('pt-BR').t('call.hangUp')).toBe('Desligar');
    expect(translator('es').t('no.such.word')).toBe('no.such.word');
    expect(translator('ar')).toMatchObject({ lang: 'ar', dir: 'rtl' });
    expect(translator('de').dir).toBe('ltr');
    expect(translator('en').t('call.otherJoined', { name: 'Matti' })).toBe('Matti joined the call');
  });

  it("the console's language: the best-liked catalogue language of Accept-Language, English when none", () => {
    expect(pageLanguage(undefined)).toBe('en');
    expect(pageLanguage('')).toBe('en');
    expect(pageLanguage('fi, sv;q=0.9')).toBe('en');
    expect(pageLanguage('es-MX,es;q=0.9,en;q=0.8')).toBe('es');
    expect(pageLanguage('fi, de;q=0.4, fr-CA;q=0.8')).toBe('fr');
    expect(pageLanguage('ar;q=0, ja')).toBe('ja');
    expect(pageLanguage('en-GB, ar')).toBe('en');
    expect(pageLanguage('*')).toBe('en');
  });

  it("words each scope in English as the contract's OAuth2 scheme does, and has every scope", () => {
    const scopes: Record<string, string> = contract.components.securitySchemes.OAuth2.flows.authorizationCode.scopes;
    const english = translator('en');
    for (const [scope, words] of Object.entries(scopes)) expect(english.t(`console.scope.${scope}`)).toBe(words);
    expect(WORD_KEYS.filter((key) => key.startsWith('console.scope.')).length).toBe(Object.keys(scopes).length);
  });
});
