// What a caller of a phone number hears before the call starts, in the caller's language where it is
// known: the language menu, the PIN prompt, and the short reasons given before hanging up. Twilio speaks
// each with <Say language>; a language without phrases here is spoken in English.
import { baseLanguage } from '../interpretation/languages.js';

export type Phrase =
  | 'menu'
  | 'pin_prompt'
  | 'wrong_pin'
  | 'too_many_pins'
  | 'unknown_number'
  | 'call_ended'
  | 'no_balance'
  | 'unavailable'
  | 'connecting';

type Phrases = Record<Phrase, string>;

// `menu` names the language in itself ({language}) and its key ({digit}).
const PHRASES: Record<string, Phrases> = {
  en: {
    menu: 'For {language}, press {digit}.',
    pin_prompt: 'Please enter your six-digit PIN.',
    wrong_pin: 'That PIN is not valid. Please try again.',
    too_many_pins: 'That PIN is not valid. Goodbye.',
    unknown_number: 'This number is not in service. Goodbye.',
    call_ended: 'This call has already ended. Goodbye.',
    no_balance: 'Sorry, we cannot take calls at the moment. Please try again later. Goodbye.',
    unavailable: 'Sorry, interpretation is not available at the moment. Please try again later. Goodbye.',
    connecting: 'Please hold while we connect you.',
  },
  es: {
    menu: 'Para {language}, pulse {digit}.',
    pin_prompt: 'Introduzca su PIN de seis dígitos.',
    wrong_pin: 'El PIN no es válido. Inténtelo de nuevo.',
    too_many_pins: 'El PIN no es válido. Adiós.',
    unknown_number: 'Este número no está en servicio. Adiós.',
    call_ended: 'Esta llamada ya ha terminado. Adiós.',
    no_balance: 'Lo sentimos, ahora no podemos atender llamadas. Inténtelo más tarde. Adiós.',
    unavailable: 'Lo sentimos, la interpretación no está disponible en este momento. Inténtelo más tarde. Adiós.',
    connecting: 'Un momento, por favor. Le estamos conectando.',
  },
  fr: {
    menu: 'En {language}, appuyez sur {digit}.',
    pin_prompt: 'Veuillez saisir votre code PIN à six chiffres.',
    wrong_pin: 'Ce code PIN n’est pas valide. Veuillez réessayer.',
    too_many_pins: 'Ce code PIN n’est pas valide. Au revoir.',
    unknown_number: 'Ce numéro n’est pas en service. Au revoir.',
    call_ended: 'Cet appel est déjà terminé. Au revoir.',
    no_balance: 'Désolé, nous ne pouvons pas prendre d’appels pour le moment. Veuillez réessayer plus tard. Au revoir.',
    unavailable: 'Désolé, l’interprétation n’est pas disponible pour le moment. Veuillez réessayer plus tard. Au revoir.',
    connecting: 'Veuillez patienter, nous vous mettons en relation.',
  },
  de: {
    menu: 'Für {language} drücken Sie die {digit}.',
    pin_prompt: 'Bitte geben Sie Ihre sechsstellige PIN ein.',
    wrong_pin: 'Diese PIN ist ungültig. Bitte versuchen Sie es noch einmal.',
    too_many_pins: 'Diese PIN ist ungültig. Auf Wiederhören.',
    unknown_number: 'Diese Rufnummer ist nicht vergeben. Auf Wiederhören.',
    call_ended: 'Dieses Gespräch ist bereits beendet. Auf Wiederhören.',
    no_balance: 'Leider können wir im Moment keine Anrufe annehmen. Bitte versuchen Sie es später noch einmal. Auf Wiederhören.',
    unavailable: 'Leider ist die Verdolmetschung im Moment nicht verfügbar. Bitte versuchen Sie es später noch einmal. Auf Wiederhören.',
    connecting: 'Einen Moment bitte, wir verbinden Sie.',
  },
  it: {
    menu: 'Per {language}, premere {digit}.',
    pin_prompt: 'Inserisca il PIN di sei cifre.',
    wrong_pin: 'Il PIN non è valido. Riprovi.',
    too_many_pins: 'Il PIN non è valido. Arrivederci.',
    unknown_number: 'Questo numero non è attivo. Arrivederci.',
    call_ended: 'Questa chiamata è già terminata. Arrivederci.',
    no_balance: 'Siamo spiacenti, al momento non possiamo ricevere chiamate. Riprovi più tardi. Arrivederci.',
    unavailable: 'Siamo spiacenti, l’interpretariato al momento non è disponibile. Riprovi più tardi. Arrivederci.',
    connecting: 'Attenda in linea, la stiamo collegando.',
  },
  pt: {
    menu: 'Para {language}, pressione {digit}.',
    pin_prompt: 'Digite o seu PIN de seis dígitos.',
    wrong_pin: 'PIN inválido. Tente novamente.',
    too_many_pins: 'PIN inválido. Até logo.',
    unknown_number: 'Este número não está em serviço. Até logo.',
    call_ended: 'Esta chamada já terminou. Até logo.',
    no_balance: 'Desculpe, no momento não podemos atender chamadas. Tente novamente mais tarde. Até logo.',
    unavailable: 'Desculpe, a interpretação não está disponível no momento. Tente novamente mais tarde. Até logo.',
    connecting: 'Aguarde um momento, estamos conectando você.',
  },
  nl: {
    menu: 'Voor {language}, toets {digit}.',
    pin_prompt: 'Toets uw pincode van zes cijfers in.',
    wrong_pin: 'Deze pincode is ongeldig. Probeer het opnieuw.',
    too_many_pins: 'Deze pincode is ongeldig. Tot ziens.',
    unknown_number: 'Dit nummer is niet in gebruik. Tot ziens.',
    call_ended: 'Dit gesprek is al beëindigd. Tot ziens.',
    no_balance: 'Helaas kunnen we op dit moment geen gesprekken aannemen. Probeer het later opnieuw. Tot ziens.',
    unavailable: 'Helaas is tolken op dit moment niet beschikbaar. Probeer het later opnieuw. Tot ziens.',
    connecting: 'Een moment geduld, we verbinden u door.',
  },
  sv: {
    menu: 'För {language}, tryck {digit}.',
    pin_prompt: 'Ange din sexsiffriga PIN-kod.',
    wrong_pin: 'PIN-koden är ogiltig. Försök igen.',
    too_many_pins: 'PIN-koden är ogiltig. Hej då.',
    unknown_number: 'Det här numret är inte i bruk. Hej då.',
    call_ended: 'Samtalet har redan avslutats. Hej då.',
    no_balance: 'Tyvärr kan vi inte ta emot samtal just nu. Försök igen senare. Hej då.',
    unavailable: 'Tyvärr är tolkning inte tillgänglig just nu. Försök igen senare. Hej då.',
    connecting: 'Ett ögonblick, vi kopplar dig vidare.',
  },
  fi: {
    menu: '{language}: paina {digit}.',
    pin_prompt: 'Näppäile kuusinumeroinen PIN-koodisi.',
    wrong_pin: 'PIN-koodi ei kelpaa. Yritä uudelleen.',
    too_many_pins: 'PIN-koodi ei kelpaa. Näkemiin.',
    unknown_number: 'Tämä numero ei ole käytössä. Näkemiin.',
    call_ended: 'Tämä puhelu on jo päättynyt. Näkemiin.',
    no_balance: 'Valitettavasti emme voi ottaa puheluita vastaan juuri nyt. Yritä myöhemmin uudelleen. Näkemiin.',
    unavailable: 'Valitettavasti tulkkaus ei ole juuri nyt käytettävissä. Yritä myöhemmin uudelleen. Näkemiin.',
    connecting: 'Hetkinen, yhdistämme puhelua.',
  },
  pl: {
    menu: 'Aby wybrać {language}, naciśnij {digit}.',
    pin_prompt: 'Wprowadź sześciocyfrowy kod PIN.',
    wrong_pin: 'Kod PIN jest nieprawidłowy. Spróbuj ponownie.',
    too_many_pins: 'Kod PIN jest nieprawidłowy. Do widzenia.',
    unknown_number: 'Ten numer jest nieaktywny. Do widzenia.',
    call_ended: 'To połączenie już się zakończyło. Do widzenia.',
    no_balance: 'Niestety nie możemy teraz odbierać połączeń. Spróbuj ponownie później. Do widzenia.',
    unavailable: 'Niestety tłumaczenie jest teraz niedostępne. Spróbuj ponownie później. Do widzenia.',
    connecting: 'Proszę czekać, łączymy.',
  },
};

/** Twilio's <Say language> for each language of PHRASES (a regional tag Twilio knows is kept as given). */
const SAY_LANGUAGE: Record<string, string> = {
  en: 'en-US',
  es: 'es-ES',
  fr: 'fr-FR',
  de: 'de-DE',
  it: 'it-IT',
  pt: 'pt-BR',
  nl: 'nl-NL',
  sv: 'sv-SE',
  fi: 'fi-FI',
  pl: 'pl-PL',
};
const REGIONAL = new Set(['en-AU', 'en-CA', 'en-GB', 'en-IE', 'en-IN', 'en-NZ', 'en-ZA', 'es-MX', 'es-US', 'fr-CA', 'fr-BE', 'de-AT', 'nl-BE', 'pt-PT']);

export interface Spoken {
  text: string;
  /** Twilio's <Say language>. */
  say: string;
}

/** The phrase in `language` (a tag such as `es` or `pt-PT`), or in English when it has none here. */
export function phrase(language: string | undefined, key: Phrase, values: Record<string, string> = {}): Spoken {
  const base = baseLanguage(language ?? 'en');
  const known = PHRASES[base] ? base : 'en';
  const tag = language && REGIONAL.has(language) && known === base ? language : SAY_LANGUAGE[known];
  return { text: PHRASES[known][key].replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? ''), say: tag };
}

/** A language's name in itself (`español`), for the menu. */
export function ownName(language: string): string {
  try {
    return new Intl.DisplayNames([language], { type: 'language', fallback: 'code' }).of(language) ?? language;
  } catch {
    return language;
  }
}

/**
 * The language most spoken in the caller's country (Twilio's `FromCountry`, ISO 3166 alpha-2), from
 * Unicode's likely-subtags data: `ES` -> `es`, `CH` -> `de`; undefined when Twilio did not say.
 */
export function countryLanguage(country: string | undefined): string | undefined {
  if (!country || !/^[A-Za-z]{2}$/.test(country)) return undefined;
  try {
    const likely = new Intl.Locale('und', { region: country.toUpperCase() }).maximize().language;
    return likely && likely !== 'und' ? likely : undefined;
  } catch {
    return undefined;
  }
}
