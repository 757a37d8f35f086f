// The console's language: one choice for every console page, the one the call and chat pages make too.
import type { Request } from 'express';
import { translator, type PageWords } from '../web/i18n/catalogue.js';
import { pageLanguage } from '../web/pageLanguage.js';

/** The console's words for this request. */
export const consoleWords = (req: Request): PageWords => translator(pageLanguage(req.get('accept-language')));
