// The pages' own words in the visitor's language: bundled translations, English where a language or
// a string is missing. One function, `translator(language)`, serves the call page and the chat page.
// Plain ES module, served as is (no build step).

const EN = {
  // call page
  'call.title': 'Call with {name}',
  'call.loading': 'Opening the call…',
  'call.with': 'with {company}',
  'call.join': 'Join',
  'call.hangUp': 'Hang up',
  'call.settings': 'My Settings',
  'call.language': 'Language',
  'call.name': 'Name',
  'call.save': 'Save',
  'call.mute': 'Mute',
  'call.unmute': 'Unmute',
  'call.cameraOff': 'Camera off',
  'call.cameraOn': 'Camera on',
  'call.captions': 'Captions',
  'call.you': 'You',
  'call.pick': 'Choose the language you speak, then join.',
  'call.pressJoin': 'Press Join to start. Your microphone will be used.',
  'call.waiting': 'Waiting for {name} to choose a language…',
  'call.inCall': 'In the call',
  'call.otherJoined': '{name} joined the call',
  'call.otherLeft': '{name} left the call',
  'call.otherSpeaking': '{name} is speaking',
  'call.otherMuted': '{name} muted the microphone',
  'call.otherLanguage': '{name} now speaks {language}',
  'call.paused': 'Interpretation is paused: the prepaid balance has run out. You hear {name} untranslated.',
  'call.untranslated': 'Interpretation is unavailable. You hear {name} untranslated.',
  'call.ended': 'The call has ended.',
  'call.left': 'You left the call. Press Join to come back.',
  'call.replaced': 'This link was replaced by a newer one. Please use the latest link you received.',
  'call.invalid': 'This call link is not valid.',
  'call.micDenied': 'The microphone is blocked. Allow microphone access in your browser, then press Join.',
  'call.offline': 'Connection lost. Reconnecting in {seconds} s…',
  'call.elsewhere': 'This call is open in another window.',
  'call.latency': 'Delay {ms} ms',
  'call.otherVideo': 'Video of {name}',
  'call.myVideo': 'Your camera',
  'call.agent': 'Support',
  'call.customer': 'Customer',
  // chat page
  'chat.message': 'Message',
  'chat.placeholder': 'Write a message…',
  'chat.send': 'Send message',
  'chat.record': 'Record a voice message',
  'chat.loading': 'Opening the chat…',
  'chat.closed': 'This conversation has ended.',
  'chat.invalid': 'This chat link is no longer valid',
  'chat.conversation': 'Conversation',
  // console: phone numbers
  'console.phoneNumbers.title': 'Phone numbers',
  'console.phoneNumbers.intro': 'People who call these numbers are interpreted. At Twilio, set each number’s Voice webhook (“A call comes in”, HTTP POST) to its Voice URL.',
  'console.phoneNumbers.number': 'Number',
  'console.phoneNumbers.answers': 'Answers',
  'console.phoneNumbers.newCall': 'A new call for each caller',
  'console.phoneNumbers.pin': 'Callers join with a PIN',
  'console.phoneNumbers.languages': 'Caller languages',
  'console.phoneNumbers.fromCountry': 'From the caller’s country',
  'console.phoneNumbers.voiceUrl': 'Voice URL',
  'console.phoneNumbers.copy': 'Copy',
  'console.phoneNumbers.created': 'Registered',
  'console.phoneNumbers.none': 'No phone numbers in this mode. Register one with POST /v1/phone_numbers.',
};

const CATALOGUE = {
  en: EN,
  es: {
    'call.title': 'Llamada con {name}', 'call.loading': 'Abriendo la llamada…', 'call.with': 'con {company}', 'call.join': 'Unirse', 'call.hangUp': 'Colgar',
    'call.settings': 'Mis ajustes', 'call.language': 'Idioma', 'call.name': 'Nombre', 'call.save': 'Guardar', 'call.mute': 'Silenciar', 'call.unmute': 'Activar micrófono',
    'call.cameraOff': 'Apagar cámara', 'call.cameraOn': 'Encender cámara', 'call.captions': 'Subtítulos', 'call.you': 'Tú',
    'call.pick': 'Elige el idioma que hablas y únete.', 'call.pressJoin': 'Pulsa Unirse para empezar. Se usará tu micrófono.',
    'call.waiting': 'Esperando a que {name} elija un idioma…', 'call.inCall': 'En la llamada', 'call.otherJoined': '{name} se unió a la llamada',
    'call.otherLeft': '{name} salió de la llamada', 'call.otherSpeaking': '{name} está hablando', 'call.otherMuted': '{name} silenció el micrófono',
    'call.otherLanguage': '{name} ahora habla {language}', 'call.paused': 'La interpretación está en pausa: el saldo prepago se ha agotado. Oyes a {name} sin traducir.',
    'call.untranslated': 'La interpretación no está disponible. Oyes a {name} sin traducir.', 'call.ended': 'La llamada ha terminado.',
    'call.left': 'Saliste de la llamada. Pulsa Unirse para volver.', 'call.replaced': 'Este enlace fue sustituido por uno nuevo. Usa el último enlace que recibiste.',
    'call.invalid': 'Este enlace de llamada no es válido.', 'call.micDenied': 'El micrófono está bloqueado. Permite el acceso al micrófono en el navegador y pulsa Unirse.',
    'call.offline': 'Conexión perdida. Reconectando en {seconds} s…', 'call.elsewhere': 'Esta llamada está abierta en otra ventana.', 'call.latency': 'Retardo {ms} ms',
    'call.otherVideo': 'Vídeo de {name}', 'call.myVideo': 'Tu cámara', 'call.agent': 'Soporte', 'call.customer': 'Cliente',
    'chat.message': 'Mensaje', 'chat.placeholder': 'Escribe un mensaje…', 'chat.send': 'Enviar mensaje', 'chat.record': 'Grabar un mensaje de voz',
    'chat.loading': 'Abriendo el chat…', 'chat.closed': 'Esta conversación ha terminado.', 'chat.invalid': 'Este enlace de chat ya no es válido', 'chat.conversation': 'Conversación',
    'console.phoneNumbers.title': 'Números de teléfono', 'console.phoneNumbers.intro': 'Quienes llaman a estos números reciben interpretación. En Twilio, configura el webhook de voz de cada número («A call comes in», HTTP POST) con su URL de voz.', 'console.phoneNumbers.number': 'Número', 'console.phoneNumbers.answers': 'Respuesta', 'console.phoneNumbers.newCall': 'Una llamada nueva por persona', 'console.phoneNumbers.pin': 'Se entra con un PIN', 'console.phoneNumbers.languages': 'Idiomas de quien llama', 'console.phoneNumbers.fromCountry': 'Según el país de quien llama', 'console.phoneNumbers.voiceUrl': 'URL de voz', 'console.phoneNumbers.copy': 'Copiar', 'console.phoneNumbers.created': 'Registrado', 'console.phoneNumbers.none': 'No hay números de teléfono en este modo. Registra uno con POST /v1/phone_numbers.',
  },
  fr: {
    'call.title': 'Appel avec {name}', 'call.loading': 'Ouverture de l’appel…', 'call.with': 'avec {company}', 'call.join': 'Rejoindre', 'call.hangUp': 'Raccrocher',
    'call.settings': 'Mes réglages', 'call.language': 'Langue', 'call.name': 'Nom', 'call.save': 'Enregistrer', 'call.mute': 'Couper le micro', 'call.unmute': 'Réactiver le micro',
    'call.cameraOff': 'Couper la caméra', 'call.cameraOn': 'Activer la caméra', 'call.captions': 'Sous-titres', 'call.you': 'Vous',
    'call.pick': 'Choisissez la langue que vous parlez, puis rejoignez.', 'call.pressJoin': 'Appuyez sur Rejoindre pour commencer. Votre micro sera utilisé.',
    'call.waiting': 'En attente du choix de langue de {name}…', 'call.inCall': 'En communication', 'call.otherJoined': '{name} a rejoint l’appel',
    'call.otherLeft': '{name} a quitté l’appel', 'call.otherSpeaking': '{name} parle', 'call.otherMuted': '{name} a coupé son micro',
    'call.otherLanguage': '{name} parle maintenant {language}', 'call.paused': 'L’interprétation est en pause : le solde prépayé est épuisé. Vous entendez {name} sans traduction.',
    'call.untranslated': 'L’interprétation est indisponible. Vous entendez {name} sans traduction.', 'call.ended': 'L’appel est terminé.',
    'call.left': 'Vous avez quitté l’appel. Appuyez sur Rejoindre pour revenir.', 'call.replaced': 'Ce lien a été remplacé par un plus récent. Utilisez le dernier lien reçu.',
    'call.invalid': 'Ce lien d’appel n’est pas valide.', 'call.micDenied': 'Le micro est bloqué. Autorisez l’accès au micro dans le navigateur, puis appuyez sur Rejoindre.',
    'call.offline': 'Connexion perdue. Reconnexion dans {seconds} s…', 'call.elsewhere': 'Cet appel est ouvert dans une autre fenêtre.', 'call.latency': 'Délai {ms} ms',
    'call.otherVideo': 'Vidéo de {name}', 'call.myVideo': 'Votre caméra', 'call.agent': 'Assistance', 'call.customer': 'Client',
    'chat.message': 'Message', 'chat.placeholder': 'Écrivez un message…', 'chat.send': 'Envoyer le message', 'chat.record': 'Enregistrer un message vocal',
    'chat.loading': 'Ouverture du chat…', 'chat.closed': 'Cette conversation est terminée.', 'chat.invalid': 'Ce lien de chat n’est plus valide', 'chat.conversation': 'Conversation',
    'console.phoneNumbers.title': 'Numéros de téléphone', 'console.phoneNumbers.intro': 'Les appels vers ces numéros sont interprétés. Chez Twilio, réglez le webhook vocal de chaque numéro (« A call comes in », HTTP POST) sur son URL vocale.', 'console.phoneNumbers.number': 'Numéro', 'console.phoneNumbers.answers': 'Réponse', 'console.phoneNumbers.newCall': 'Un nouvel appel par appelant', 'console.phoneNumbers.pin': 'L’appelant entre avec un code PIN', 'console.phoneNumbers.languages': 'Langues des appelants', 'console.phoneNumbers.fromCountry': 'Selon le pays de l’appelant', 'console.phoneNumbers.voiceUrl': 'URL vocale', 'console.phoneNumbers.copy': 'Copier', 'console.phoneNumbers.created': 'Enregistré', 'console.phoneNumbers.none': 'Aucun numéro de téléphone dans ce mode. Enregistrez-en un avec POST /v1/phone_numbers.',
  },
  de: {
    'call.title': 'Anruf mit {name}', 'call.loading': 'Anruf wird geöffnet…', 'call.with': 'mit {company}', 'call.join': 'Beitreten', 'call.hangUp': 'Auflegen',
    'call.settings': 'Meine Einstellungen', 'call.language': 'Sprache', 'call.name': 'Name', 'call.save': 'Speichern', 'call.mute': 'Stummschalten', 'call.unmute': 'Mikrofon an',
    'call.cameraOff': 'Kamera aus', 'call.cameraOn': 'Kamera an', 'call.captions': 'Untertitel', 'call.you': 'Sie',
    'call.pick': 'Wählen Sie Ihre Sprache und treten Sie dann bei.', 'call.pressJoin': 'Drücken Sie Beitreten, um zu starten. Ihr Mikrofon wird verwendet.',
    'call.waiting': 'Warten, bis {name} eine Sprache wählt…', 'call.inCall': 'Im Gespräch', 'call.otherJoined': '{name} ist dem Anruf beigetreten',
    'call.otherLeft': '{name} hat den Anruf verlassen', 'call.otherSpeaking': '{name} spricht', 'call.otherMuted': '{name} hat das Mikrofon stummgeschaltet',
    'call.otherLanguage': '{name} spricht jetzt {language}', 'call.paused': 'Die Verdolmetschung ist pausiert: Das Guthaben ist aufgebraucht. Sie hören {name} unübersetzt.',
    'call.untranslated': 'Die Verdolmetschung ist nicht verfügbar. Sie hören {name} unübersetzt.', 'call.ended': 'Der Anruf ist beendet.',
    'call.left': 'Sie haben den Anruf verlassen. Drücken Sie Beitreten, um zurückzukehren.', 'call.replaced': 'Dieser Link wurde durch einen neueren ersetzt. Bitte verwenden Sie den neuesten Link.',
    'call.invalid': 'Dieser Anruf-Link ist ungültig.', 'call.micDenied': 'Das Mikrofon ist blockiert. Erlauben Sie den Mikrofonzugriff im Browser und drücken Sie Beitreten.',
    'call.offline': 'Verbindung verloren. Neuer Versuch in {seconds} s…', 'call.elsewhere': 'Dieser Anruf ist in einem anderen Fenster geöffnet.', 'call.latency': 'Verzögerung {ms} ms',
    'call.otherVideo': 'Video von {name}', 'call.myVideo': 'Ihre Kamera', 'call.agent': 'Support', 'call.customer': 'Kunde',
    'chat.message': 'Nachricht', 'chat.placeholder': 'Nachricht schreiben…', 'chat.send': 'Nachricht senden', 'chat.record': 'Sprachnachricht aufnehmen',
    'chat.loading': 'Chat wird geöffnet…', 'chat.closed': 'Dieses Gespräch ist beendet.', 'chat.invalid': 'Dieser Chat-Link ist nicht mehr gültig', 'chat.conversation': 'Gespräch',
    'console.phoneNumbers.title': 'Telefonnummern', 'console.phoneNumbers.intro': 'Wer diese Nummern anruft, wird gedolmetscht. Stellen Sie bei Twilio den Voice-Webhook jeder Nummer („A call comes in“, HTTP POST) auf ihre Sprach-URL.', 'console.phoneNumbers.number': 'Nummer', 'console.phoneNumbers.answers': 'Annahme', 'console.phoneNumbers.newCall': 'Ein neues Gespräch je Anrufer', 'console.phoneNumbers.pin': 'Anrufer kommen mit einer PIN hinein', 'console.phoneNumbers.languages': 'Sprachen der Anrufer', 'console.phoneNumbers.fromCountry': 'Nach dem Land des Anrufers', 'console.phoneNumbers.voiceUrl': 'Sprach-URL', 'console.phoneNumbers.copy': 'Kopieren', 'console.phoneNumbers.created': 'Registriert', 'console.phoneNumbers.none': 'Keine Telefonnummern in diesem Modus. Registrieren Sie eine mit POST /v1/phone_numbers.',
  },
  it: {
    'call.title': 'Chiamata con {name}', 'call.loading': 'Apertura della chiamata…', 'call.with': 'con {company}', 'call.join': 'Partecipa', 'call.hangUp': 'Riaggancia',
    'call.settings': 'Le mie impostazioni', 'call.language': 'Lingua', 'call.name': 'Nome', 'call.save': 'Salva', 'call.mute': 'Disattiva microfono', 'call.unmute': 'Attiva microfono',
    'call.cameraOff': 'Spegni videocamera', 'call.cameraOn': 'Accendi videocamera', 'call.captions': 'Sottotitoli', 'call.you': 'Tu',
    'call.pick': 'Scegli la lingua che parli, poi partecipa.', 'call.pressJoin': 'Premi Partecipa per iniziare. Verrà usato il microfono.',
    'call.waiting': 'In attesa che {name} scelga una lingua…', 'call.inCall': 'In chiamata', 'call.otherJoined': '{name} è entrato nella chiamata',
    'call.otherLeft': '{name} ha lasciato la chiamata', 'call.otherSpeaking': '{name} sta parlando', 'call.otherMuted': '{name} ha disattivato il microfono',
    'call.otherLanguage': '{name} ora parla {language}', 'call.paused': 'L’interpretazione è in pausa: il credito prepagato è esaurito. Senti {name} senza traduzione.',
    'call.untranslated': 'L’interpretazione non è disponibile. Senti {name} senza traduzione.', 'call.ended': 'La chiamata è terminata.',
    'call.left': 'Hai lasciato la chiamata. Premi Partecipa per rientrare.', 'call.replaced': 'Questo link è stato sostituito da uno più recente. Usa l’ultimo link ricevuto.',
    'call.invalid': 'Questo link di chiamata non è valido.', 'call.micDenied': 'Il microfono è bloccato. Consenti l’accesso al microfono nel browser, poi premi Partecipa.',
    'call.offline': 'Connessione persa. Nuovo tentativo tra {seconds} s…', 'call.elsewhere': 'Questa chiamata è aperta in un’altra finestra.', 'call.latency': 'Ritardo {ms} ms',
    'call.otherVideo': 'Video di {name}', 'call.myVideo': 'La tua videocamera', 'call.agent': 'Assistenza', 'call.customer': 'Cliente',
    'chat.message': 'Messaggio', 'chat.placeholder': 'Scrivi un messaggio…', 'chat.send': 'Invia messaggio', 'chat.record': 'Registra un messaggio vocale',
    'chat.loading': 'Apertura della chat…', 'chat.closed': 'Questa conversazione è terminata.', 'chat.invalid': 'Questo link della chat non è più valido', 'chat.conversation': 'Conversazione',
    'console.phoneNumbers.title': 'Numeri di telefono', 'console.phoneNumbers.intro': 'Chi chiama questi numeri viene interpretato. Su Twilio imposta il webhook vocale di ogni numero («A call comes in», HTTP POST) sul suo URL vocale.', 'console.phoneNumbers.number': 'Numero', 'console.phoneNumbers.answers': 'Risposta', 'console.phoneNumbers.newCall': 'Una nuova chiamata per ogni chiamante', 'console.phoneNumbers.pin': 'Si entra con un PIN', 'console.phoneNumbers.languages': 'Lingue dei chiamanti', 'console.phoneNumbers.fromCountry': 'Dal paese del chiamante', 'console.phoneNumbers.voiceUrl': 'URL vocale', 'console.phoneNumbers.copy': 'Copia', 'console.phoneNumbers.created': 'Registrato', 'console.phoneNumbers.none': 'Nessun numero di telefono in questa modalità. Registrane uno con POST /v1/phone_numbers.',
  },
  pt: {
    'call.title': 'Chamada com {name}', 'call.loading': 'A abrir a chamada…', 'call.with': 'com {company}', 'call.join': 'Entrar', 'call.hangUp': 'Desligar',
    'call.settings': 'Minhas definições', 'call.language': 'Idioma', 'call.name': 'Nome', 'call.save': 'Guardar', 'call.mute': 'Silenciar', 'call.unmute': 'Ativar microfone',
    'call.cameraOff': 'Desligar câmara', 'call.cameraOn': 'Ligar câmara', 'call.captions': 'Legendas', 'call.you': 'Você',
    'call.pick': 'Escolha o idioma que fala e entre.', 'call.pressJoin': 'Prima Entrar para começar. O seu microfone será usado.',
    'call.waiting': 'À espera que {name} escolha um idioma…', 'call.inCall': 'Em chamada', 'call.otherJoined': '{name} entrou na chamada',
    'call.otherLeft': '{name} saiu da chamada', 'call.otherSpeaking': '{name} está a falar', 'call.otherMuted': '{name} silenciou o microfone',
    'call.otherLanguage': '{name} fala agora {language}', 'call.paused': 'A interpretação está em pausa: o saldo pré-pago esgotou-se. Ouve {name} sem tradução.',
    'call.untranslated': 'A interpretação não está disponível. Ouve {name} sem tradução.', 'call.ended': 'A chamada terminou.',
    'call.left': 'Saiu da chamada. Prima Entrar para voltar.', 'call.replaced': 'Este link foi substituído por um mais recente. Use o último link que recebeu.',
    'call.invalid': 'Este link de chamada não é válido.', 'call.micDenied': 'O microfone está bloqueado. Permita o acesso ao microfone no navegador e prima Entrar.',
    'call.offline': 'Ligação perdida. Nova tentativa em {seconds} s…', 'call.elsewhere': 'Esta chamada está aberta noutra janela.', 'call.latency': 'Atraso {ms} ms',
    'call.otherVideo': 'Vídeo de {name}', 'call.myVideo': 'A sua câmara', 'call.agent': 'Suporte', 'call.customer': 'Cliente',
    'chat.message': 'Mensagem', 'chat.placeholder': 'Escreva uma mensagem…', 'chat.send': 'Enviar mensagem', 'chat.record': 'Gravar uma mensagem de voz',
    'chat.loading': 'A abrir o chat…', 'chat.closed': 'Esta conversa terminou.', 'chat.invalid': 'Este link de chat já não é válido', 'chat.conversation': 'Conversa',
    'console.phoneNumbers.title': 'Números de telefone', 'console.phoneNumbers.intro': 'Quem liga para estes números é interpretado. Na Twilio, defina o webhook de voz de cada número (“A call comes in”, HTTP POST) como a sua URL de voz.', 'console.phoneNumbers.number': 'Número', 'console.phoneNumbers.answers': 'Atendimento', 'console.phoneNumbers.newCall': 'Uma nova chamada por pessoa', 'console.phoneNumbers.pin': 'Quem liga entra com um PIN', 'console.phoneNumbers.languages': 'Idiomas de quem liga', 'console.phoneNumbers.fromCountry': 'Pelo país de quem liga', 'console.phoneNumbers.voiceUrl': 'URL de voz', 'console.phoneNumbers.copy': 'Copiar', 'console.phoneNumbers.created': 'Registrado', 'console.phoneNumbers.none': 'Nenhum número de telefone neste modo. Registre um com POST /v1/phone_numbers.',
  },
  nl: {
    'call.title': 'Gesprek met {name}', 'call.loading': 'Gesprek wordt geopend…', 'call.with': 'met {company}', 'call.join': 'Deelnemen', 'call.hangUp': 'Ophangen',
    'call.settings': 'Mijn instellingen', 'call.language': 'Taal', 'call.name': 'Naam', 'call.save': 'Opslaan', 'call.mute': 'Dempen', 'call.unmute': 'Microfoon aan',
    'call.cameraOff': 'Camera uit', 'call.cameraOn': 'Camera aan', 'call.captions': 'Ondertitels', 'call.you': 'Jij',
    'call.pick': 'Kies de taal die je spreekt en neem dan deel.', 'call.pressJoin': 'Druk op Deelnemen om te beginnen. Je microfoon wordt gebruikt.',
    'call.waiting': 'Wachten tot {name} een taal kiest…', 'call.inCall': 'In gesprek', 'call.otherJoined': '{name} neemt deel aan het gesprek',
    'call.otherLeft': '{name} heeft het gesprek verlaten', 'call.otherSpeaking': '{name} spreekt', 'call.otherMuted': '{name} heeft de microfoon gedempt',
    'call.otherLanguage': '{name} spreekt nu {language}', 'call.paused': 'Het tolken is gepauzeerd: het prepaidtegoed is op. Je hoort {name} onvertaald.',
    'call.untranslated': 'Tolken is niet beschikbaar. Je hoort {name} onvertaald.', 'call.ended': 'Het gesprek is beëindigd.',
    'call.left': 'Je hebt het gesprek verlaten. Druk op Deelnemen om terug te komen.', 'call.replaced': 'Deze link is vervangen door een nieuwere. Gebruik de laatste link die je kreeg.',
    'call.invalid': 'Deze gesprekslink is niet geldig.', 'call.micDenied': 'De microfoon is geblokkeerd. Sta microfoontoegang toe in je browser en druk op Deelnemen.',
    'call.offline': 'Verbinding verbroken. Opnieuw verbinden over {seconds} s…', 'call.elsewhere': 'Dit gesprek is in een ander venster geopend.', 'call.latency': 'Vertraging {ms} ms',
    'call.otherVideo': 'Video van {name}', 'call.myVideo': 'Jouw camera', 'call.agent': 'Support', 'call.customer': 'Klant',
    'chat.message': 'Bericht', 'chat.placeholder': 'Schrijf een bericht…', 'chat.send': 'Bericht versturen', 'chat.record': 'Spraakbericht opnemen',
    'chat.loading': 'Chat wordt geopend…', 'chat.closed': 'Dit gesprek is beëindigd.', 'chat.invalid': 'Deze chatlink is niet meer geldig', 'chat.conversation': 'Gesprek',
    'console.phoneNumbers.title': 'Telefoonnummers', 'console.phoneNumbers.intro': 'Wie deze nummers belt, wordt getolkt. Stel bij Twilio de spraakwebhook van elk nummer („A call comes in”, HTTP POST) in op de spraak-URL.', 'console.phoneNumbers.number': 'Nummer', 'console.phoneNumbers.answers': 'Beantwoording', 'console.phoneNumbers.newCall': 'Een nieuw gesprek per beller', 'console.phoneNumbers.pin': 'Bellers komen binnen met een pincode', 'console.phoneNumbers.languages': 'Talen van bellers', 'console.phoneNumbers.fromCountry': 'Uit het land van de beller', 'console.phoneNumbers.voiceUrl': 'Spraak-URL', 'console.phoneNumbers.copy': 'Kopiëren', 'console.phoneNumbers.created': 'Geregistreerd', 'console.phoneNumbers.none': 'Geen telefoonnummers in deze modus. Registreer er een met POST /v1/phone_numbers.',
  },
  pl: {
    'call.title': 'Rozmowa z {name}', 'call.loading': 'Otwieranie rozmowy…', 'call.with': 'z {company}', 'call.join': 'Dołącz', 'call.hangUp': 'Rozłącz',
    'call.settings': 'Moje ustawienia', 'call.language': 'Język', 'call.name': 'Imię', 'call.save': 'Zapisz', 'call.mute': 'Wycisz', 'call.unmute': 'Włącz mikrofon',
    'call.cameraOff': 'Wyłącz kamerę', 'call.cameraOn': 'Włącz kamerę', 'call.captions': 'Napisy', 'call.you': 'Ty',
    'call.pick': 'Wybierz język, którym mówisz, a potem dołącz.', 'call.pressJoin': 'Naciśnij Dołącz, aby zacząć. Zostanie użyty mikrofon.',
    'call.waiting': 'Czekanie, aż {name} wybierze język…', 'call.inCall': 'W rozmowie', 'call.otherJoined': '{name} dołącza do rozmowy',
    'call.otherLeft': '{name} opuszcza rozmowę', 'call.otherSpeaking': '{name} mówi', 'call.otherMuted': '{name} wycisza mikrofon',
    'call.otherLanguage': '{name} mówi teraz: {language}', 'call.paused': 'Tłumaczenie wstrzymane: skończyły się środki przedpłacone. Słyszysz {name} bez tłumaczenia.',
    'call.untranslated': 'Tłumaczenie jest niedostępne. Słyszysz {name} bez tłumaczenia.', 'call.ended': 'Rozmowa została zakończona.',
    'call.left': 'Opuszczono rozmowę. Naciśnij Dołącz, aby wrócić.', 'call.replaced': 'Ten link został zastąpiony nowszym. Użyj najnowszego otrzymanego linku.',
    'call.invalid': 'Ten link do rozmowy jest nieprawidłowy.', 'call.micDenied': 'Mikrofon jest zablokowany. Zezwól na dostęp do mikrofonu w przeglądarce i naciśnij Dołącz.',
    'call.offline': 'Utracono połączenie. Ponowna próba za {seconds} s…', 'call.elsewhere': 'Ta rozmowa jest otwarta w innym oknie.', 'call.latency': 'Opóźnienie {ms} ms',
    'call.otherVideo': 'Obraz: {name}', 'call.myVideo': 'Twoja kamera', 'call.agent': 'Wsparcie', 'call.customer': 'Klient',
    'chat.message': 'Wiadomość', 'chat.placeholder': 'Napisz wiadomość…', 'chat.send': 'Wyślij wiadomość', 'chat.record': 'Nagraj wiadomość głosową',
    'chat.loading': 'Otwieranie czatu…', 'chat.closed': 'Ta rozmowa została zakończona.', 'chat.invalid': 'Ten link do czatu nie jest już ważny', 'chat.conversation': 'Rozmowa',
    'console.phoneNumbers.title': 'Numery telefonów', 'console.phoneNumbers.intro': 'Osoby dzwoniące na te numery mają tłumaczenie. W Twilio ustaw webhook głosowy każdego numeru („A call comes in”, HTTP POST) na jego adres URL głosu.', 'console.phoneNumbers.number': 'Numer', 'console.phoneNumbers.answers': 'Odbiór', 'console.phoneNumbers.newCall': 'Nowa rozmowa dla każdego dzwoniącego', 'console.phoneNumbers.pin': 'Dzwoniący wchodzą z kodem PIN', 'console.phoneNumbers.languages': 'Języki dzwoniących', 'console.phoneNumbers.fromCountry': 'Według kraju dzwoniącego', 'console.phoneNumbers.voiceUrl': 'Adres URL głosu', 'console.phoneNumbers.copy': 'Kopiuj', 'console.phoneNumbers.created': 'Zarejestrowano', 'console.phoneNumbers.none': 'Brak numerów telefonów w tym trybie. Zarejestruj numer przez POST /v1/phone_numbers.',
  },
  tr: {
    'call.title': '{name} ile görüşme', 'call.loading': 'Görüşme açılıyor…', 'call.with': '{company}', 'call.join': 'Katıl', 'call.hangUp': 'Kapat',
    'call.settings': 'Ayarlarım', 'call.language': 'Dil', 'call.name': 'Ad', 'call.save': 'Kaydet', 'call.mute': 'Sesi kapat', 'call.unmute': 'Sesi aç',
    'call.cameraOff': 'Kamerayı kapat', 'call.cameraOn': 'Kamerayı aç', 'call.captions': 'Altyazılar', 'call.you': 'Siz',
    'call.pick': 'Konuştuğunuz dili seçin, sonra katılın.', 'call.pressJoin': 'Başlamak için Katıl’a basın. Mikrofonunuz kullanılacak.',
    'call.waiting': '{name} kişisinin dil seçmesi bekleniyor…', 'call.inCall': 'Görüşmede', 'call.otherJoined': '{name} görüşmeye katıldı',
    'call.otherLeft': '{name} görüşmeden ayrıldı', 'call.otherSpeaking': '{name} konuşuyor', 'call.otherMuted': '{name} mikrofonunu kapattı',
    'call.otherLanguage': '{name} artık {language} konuşuyor', 'call.paused': 'Tercüme duraklatıldı: ön ödemeli bakiye bitti. {name} kişisini çevrilmeden duyuyorsunuz.',
    'call.untranslated': 'Tercüme kullanılamıyor. {name} kişisini çevrilmeden duyuyorsunuz.', 'call.ended': 'Görüşme sona erdi.',
    'call.left': 'Görüşmeden ayrıldınız. Geri dönmek için Katıl’a basın.', 'call.replaced': 'Bu bağlantı daha yenisiyle değiştirildi. Lütfen aldığınız son bağlantıyı kullanın.',
    'call.invalid': 'Bu görüşme bağlantısı geçerli değil.', 'call.micDenied': 'Mikrofon engellendi. Tarayıcıda mikrofon erişimine izin verin ve Katıl’a basın.',
    'call.offline': 'Bağlantı koptu. {seconds} sn içinde yeniden bağlanılıyor…', 'call.elsewhere': 'Bu görüşme başka bir pencerede açık.', 'call.latency': 'Gecikme {ms} ms',
    'call.otherVideo': '{name} görüntüsü', 'call.myVideo': 'Kameranız', 'call.agent': 'Destek', 'call.customer': 'Müşteri',
    'chat.message': 'Mesaj', 'chat.placeholder': 'Bir mesaj yazın…', 'chat.send': 'Mesajı gönder', 'chat.record': 'Sesli mesaj kaydet',
    'chat.loading': 'Sohbet açılıyor…', 'chat.closed': 'Bu görüşme sona erdi.', 'chat.invalid': 'Bu sohbet bağlantısı artık geçerli değil', 'chat.conversation': 'Görüşme',
    'console.phoneNumbers.title': 'Telefon numaraları', 'console.phoneNumbers.intro': 'Bu numaraları arayanlara tercümanlık yapılır. Twilio’da her numaranın sesli webhook’unu (“A call comes in”, HTTP POST) ses URL’sine ayarlayın.', 'console.phoneNumbers.number': 'Numara', 'console.phoneNumbers.answers': 'Yanıt', 'console.phoneNumbers.newCall': 'Her arayan için yeni bir görüşme', 'console.phoneNumbers.pin': 'Arayanlar PIN ile katılır', 'console.phoneNumbers.languages': 'Arayanların dilleri', 'console.phoneNumbers.fromCountry': 'Arayanın ülkesine göre', 'console.phoneNumbers.voiceUrl': 'Ses URL’si', 'console.phoneNumbers.copy': 'Kopyala', 'console.phoneNumbers.created': 'Kayıt tarihi', 'console.phoneNumbers.none': 'Bu modda telefon numarası yok. POST /v1/phone_numbers ile bir numara kaydedin.',
  },
  ru: {
    'call.title': 'Звонок: {name}', 'call.loading': 'Открываем звонок…', 'call.with': '{company}', 'call.join': 'Присоединиться', 'call.hangUp': 'Завершить',
    'call.settings': 'Мои настройки', 'call.language': 'Язык', 'call.name': 'Имя', 'call.save': 'Сохранить', 'call.mute': 'Выключить микрофон', 'call.unmute': 'Включить микрофон',
    'call.cameraOff': 'Выключить камеру', 'call.cameraOn': 'Включить камеру', 'call.captions': 'Субтитры', 'call.you': 'Вы',
    'call.pick': 'Выберите язык, на котором говорите, и присоединяйтесь.', 'call.pressJoin': 'Нажмите «Присоединиться», чтобы начать. Будет использован микрофон.',
    'call.waiting': 'Ждём, пока {name} выберет язык…', 'call.inCall': 'В звонке', 'call.otherJoined': '{name} присоединяется к звонку',
    'call.otherLeft': '{name} покидает звонок', 'call.otherSpeaking': '{name} говорит', 'call.otherMuted': '{name} выключает микрофон',
    'call.otherLanguage': '{name} теперь говорит: {language}', 'call.paused': 'Перевод приостановлен: предоплаченный баланс исчерпан. Вы слышите {name} без перевода.',
    'call.untranslated': 'Перевод недоступен. Вы слышите {name} без перевода.', 'call.ended': 'Звонок завершён.',
    'call.left': 'Вы вышли из звонка. Нажмите «Присоединиться», чтобы вернуться.', 'call.replaced': 'Эта ссылка заменена новой. Используйте последнюю полученную ссылку.',
    'call.invalid': 'Эта ссылка на звонок недействительна.', 'call.micDenied': 'Микрофон заблокирован. Разрешите доступ к микрофону в браузере и нажмите «Присоединиться».',
    'call.offline': 'Соединение потеряно. Повтор через {seconds} с…', 'call.elsewhere': 'Этот звонок открыт в другом окне.', 'call.latency': 'Задержка {ms} мс',
    'call.otherVideo': 'Видео: {name}', 'call.myVideo': 'Ваша камера', 'call.agent': 'Поддержка', 'call.customer': 'Клиент',
    'chat.message': 'Сообщение', 'chat.placeholder': 'Напишите сообщение…', 'chat.send': 'Отправить сообщение', 'chat.record': 'Записать голосовое сообщение',
    'chat.loading': 'Открываем чат…', 'chat.closed': 'Этот разговор завершён.', 'chat.invalid': 'Эта ссылка на чат больше недействительна', 'chat.conversation': 'Разговор',
    'console.phoneNumbers.title': 'Телефонные номера', 'console.phoneNumbers.intro': 'Звонящим на эти номера предоставляется перевод. В Twilio укажите для каждого номера голосовой вебхук («A call comes in», HTTP POST) — его голосовой URL.', 'console.phoneNumbers.number': 'Номер', 'console.phoneNumbers.answers': 'Ответ', 'console.phoneNumbers.newCall': 'Новый звонок для каждого абонента', 'console.phoneNumbers.pin': 'Вход по PIN-коду', 'console.phoneNumbers.languages': 'Языки звонящих', 'console.phoneNumbers.fromCountry': 'По стране звонящего', 'console.phoneNumbers.voiceUrl': 'Голосовой URL', 'console.phoneNumbers.copy': 'Копировать', 'console.phoneNumbers.created': 'Зарегистрирован', 'console.phoneNumbers.none': 'В этом режиме нет телефонных номеров. Зарегистрируйте номер через POST /v1/phone_numbers.',
  },
  zh: {
    'call.title': '与 {name} 通话', 'call.loading': '正在打开通话…', 'call.with': '{company}', 'call.join': '加入', 'call.hangUp': '挂断',
    'call.settings': '我的设置', 'call.language': '语言', 'call.name': '姓名', 'call.save': '保存', 'call.mute': '静音', 'call.unmute': '取消静音',
    'call.cameraOff': '关闭摄像头', 'call.cameraOn': '打开摄像头', 'call.captions': '字幕', 'call.you': '你',
    'call.pick': '请选择你说的语言，然后加入。', 'call.pressJoin': '按“加入”开始。将使用你的麦克风。',
    'call.waiting': '正在等待 {name} 选择语言…', 'call.inCall': '通话中', 'call.otherJoined': '{name} 已加入通话',
    'call.otherLeft': '{name} 已离开通话', 'call.otherSpeaking': '{name} 正在说话', 'call.otherMuted': '{name} 已将麦克风静音',
    'call.otherLanguage': '{name} 现在说 {language}', 'call.paused': '口译已暂停：预付余额已用完。你听到的是未翻译的 {name}。',
    'call.untranslated': '口译不可用。你听到的是未翻译的 {name}。', 'call.ended': '通话已结束。',
    'call.left': '你已离开通话。按“加入”可重新加入。', 'call.replaced': '此链接已被更新的链接取代。请使用你收到的最新链接。',
    'call.invalid': '此通话链接无效。', 'call.micDenied': '麦克风被阻止。请在浏览器中允许访问麦克风，然后按“加入”。',
    'call.offline': '连接已断开。{seconds} 秒后重新连接…', 'call.elsewhere': '此通话已在另一个窗口中打开。', 'call.latency': '延迟 {ms} 毫秒',
    'call.otherVideo': '{name} 的视频', 'call.myVideo': '你的摄像头', 'call.agent': '客服', 'call.customer': '客户',
    'chat.message': '消息', 'chat.placeholder': '输入消息…', 'chat.send': '发送消息', 'chat.record': '录制语音消息',
    'chat.loading': '正在打开聊天…', 'chat.closed': '此对话已结束。', 'chat.invalid': '此聊天链接已失效', 'chat.conversation': '对话',
    'console.phoneNumbers.title': '电话号码', 'console.phoneNumbers.intro': '拨打这些号码的来电会获得口译。请在 Twilio 中将每个号码的语音 Webhook（“A call comes in”，HTTP POST）设为其语音 URL。', 'console.phoneNumbers.number': '号码', 'console.phoneNumbers.answers': '接听方式', 'console.phoneNumbers.newCall': '每位来电者新建一个通话', 'console.phoneNumbers.pin': '来电者凭 PIN 加入', 'console.phoneNumbers.languages': '来电者语言', 'console.phoneNumbers.fromCountry': '按来电者所在国家', 'console.phoneNumbers.voiceUrl': '语音 URL', 'console.phoneNumbers.copy': '复制', 'console.phoneNumbers.created': '注册时间', 'console.phoneNumbers.none': '此模式下没有电话号码。请使用 POST /v1/phone_numbers 注册一个。',
  },
  ja: {
    'call.title': '{name} との通話', 'call.loading': '通話を開いています…', 'call.with': '{company}', 'call.join': '参加', 'call.hangUp': '通話を終了',
    'call.settings': 'マイ設定', 'call.language': '言語', 'call.name': '名前', 'call.save': '保存', 'call.mute': 'ミュート', 'call.unmute': 'ミュート解除',
    'call.cameraOff': 'カメラをオフ', 'call.cameraOn': 'カメラをオン', 'call.captions': '字幕', 'call.you': 'あなた',
    'call.pick': '話す言語を選んでから参加してください。', 'call.pressJoin': '「参加」を押して開始します。マイクが使用されます。',
    'call.waiting': '{name} が言語を選ぶのを待っています…', 'call.inCall': '通話中', 'call.otherJoined': '{name} が通話に参加しました',
    'call.otherLeft': '{name} が通話から退出しました', 'call.otherSpeaking': '{name} が話しています', 'call.otherMuted': '{name} がマイクをミュートしました',
    'call.otherLanguage': '{name} は {language} で話しています', 'call.paused': '通訳は一時停止中です：前払い残高がなくなりました。{name} の声は翻訳されずに聞こえます。',
    'call.untranslated': '通訳を利用できません。{name} の声は翻訳されずに聞こえます。', 'call.ended': '通話は終了しました。',
    'call.left': '通話から退出しました。「参加」を押すと戻れます。', 'call.replaced': 'このリンクは新しいリンクに置き換えられました。最新のリンクを使ってください。',
    'call.invalid': 'この通話リンクは無効です。', 'call.micDenied': 'マイクがブロックされています。ブラウザでマイクへのアクセスを許可し、「参加」を押してください。',
    'call.offline': '接続が切れました。{seconds} 秒後に再接続します…', 'call.elsewhere': 'この通話は別のウィンドウで開かれています。', 'call.latency': '遅延 {ms} ミリ秒',
    'call.otherVideo': '{name} の映像', 'call.myVideo': 'あなたのカメラ', 'call.agent': 'サポート', 'call.customer': 'お客様',
    'chat.message': 'メッセージ', 'chat.placeholder': 'メッセージを入力…', 'chat.send': 'メッセージを送信', 'chat.record': 'ボイスメッセージを録音',
    'chat.loading': 'チャットを開いています…', 'chat.closed': 'この会話は終了しました。', 'chat.invalid': 'このチャットリンクは無効になりました', 'chat.conversation': '会話',
    'console.phoneNumbers.title': '電話番号', 'console.phoneNumbers.intro': 'これらの番号への着信は通訳されます。Twilio で各番号の音声 Webhook（「A call comes in」、HTTP POST）を音声 URL に設定してください。', 'console.phoneNumbers.number': '番号', 'console.phoneNumbers.answers': '応答', 'console.phoneNumbers.newCall': '発信者ごとに新しい通話', 'console.phoneNumbers.pin': '発信者は PIN で参加', 'console.phoneNumbers.languages': '発信者の言語', 'console.phoneNumbers.fromCountry': '発信者の国から判定', 'console.phoneNumbers.voiceUrl': '音声 URL', 'console.phoneNumbers.copy': 'コピー', 'console.phoneNumbers.created': '登録日時', 'console.phoneNumbers.none': 'このモードには電話番号がありません。POST /v1/phone_numbers で登録してください。',
  },
  ar: {
    'call.title': 'مكالمة مع {name}', 'call.loading': 'جارٍ فتح المكالمة…', 'call.with': 'مع {company}', 'call.join': 'انضمام', 'call.hangUp': 'إنهاء المكالمة',
    'call.settings': 'إعداداتي', 'call.language': 'اللغة', 'call.name': 'الاسم', 'call.save': 'حفظ', 'call.mute': 'كتم الصوت', 'call.unmute': 'إلغاء الكتم',
    'call.cameraOff': 'إيقاف الكاميرا', 'call.cameraOn': 'تشغيل الكاميرا', 'call.captions': 'الترجمة النصية', 'call.you': 'أنت',
    'call.pick': 'اختر اللغة التي تتحدثها ثم انضم.', 'call.pressJoin': 'اضغط انضمام للبدء. سيُستخدم الميكروفون.',
    'call.waiting': 'بانتظار أن يختار {name} لغة…', 'call.inCall': 'في المكالمة', 'call.otherJoined': 'انضم {name} إلى المكالمة',
    'call.otherLeft': 'غادر {name} المكالمة', 'call.otherSpeaking': '{name} يتحدث', 'call.otherMuted': 'كتم {name} الميكروفون',
    'call.otherLanguage': '{name} يتحدث الآن {language}', 'call.paused': 'الترجمة الفورية متوقفة: نفد الرصيد المدفوع مسبقًا. تسمع {name} دون ترجمة.',
    'call.untranslated': 'الترجمة الفورية غير متاحة. تسمع {name} دون ترجمة.', 'call.ended': 'انتهت المكالمة.',
    'call.left': 'غادرت المكالمة. اضغط انضمام للعودة.', 'call.replaced': 'تم استبدال هذا الرابط برابط أحدث. استخدم أحدث رابط وصلك.',
    'call.invalid': 'رابط المكالمة هذا غير صالح.', 'call.micDenied': 'الميكروفون محظور. اسمح بالوصول إلى الميكروفون في المتصفح ثم اضغط انضمام.',
    'call.offline': 'انقطع الاتصال. إعادة الاتصال خلال {seconds} ث…', 'call.elsewhere': 'هذه المكالمة مفتوحة في نافذة أخرى.', 'call.latency': 'التأخير {ms} مللي ثانية',
    'call.otherVideo': 'فيديو {name}', 'call.myVideo': 'الكاميرا الخاصة بك', 'call.agent': 'الدعم', 'call.customer': 'العميل',
    'chat.message': 'رسالة', 'chat.placeholder': 'اكتب رسالة…', 'chat.send': 'إرسال الرسالة', 'chat.record': 'تسجيل رسالة صوتية',
    'chat.loading': 'جارٍ فتح الدردشة…', 'chat.closed': 'انتهت هذه المحادثة.', 'chat.invalid': 'رابط الدردشة هذا لم يعد صالحًا', 'chat.conversation': 'المحادثة',
    'console.phoneNumbers.title': 'أرقام الهاتف', 'console.phoneNumbers.intro': 'يحصل المتصلون بهذه الأرقام على ترجمة فورية. في Twilio، اضبط خطاف الصوت لكل رقم («A call comes in»، HTTP POST) على عنوان URL الصوتي الخاص به.', 'console.phoneNumbers.number': 'الرقم', 'console.phoneNumbers.answers': 'طريقة الرد', 'console.phoneNumbers.newCall': 'مكالمة جديدة لكل متصل', 'console.phoneNumbers.pin': 'ينضم المتصلون برمز PIN', 'console.phoneNumbers.languages': 'لغات المتصلين', 'console.phoneNumbers.fromCountry': 'حسب بلد المتصل', 'console.phoneNumbers.voiceUrl': 'عنوان URL الصوتي', 'console.phoneNumbers.copy': 'نسخ', 'console.phoneNumbers.created': 'تاريخ التسجيل', 'console.phoneNumbers.none': 'لا توجد أرقام هاتف في هذا الوضع. سجّل رقمًا عبر POST /v1/phone_numbers.',
  },
  hi: {
    'call.title': '{name} के साथ कॉल', 'call.loading': 'कॉल खोली जा रही है…', 'call.with': '{company}', 'call.join': 'जुड़ें', 'call.hangUp': 'कॉल काटें',
    'call.settings': 'मेरी सेटिंग्स', 'call.language': 'भाषा', 'call.name': 'नाम', 'call.save': 'सहेजें', 'call.mute': 'म्यूट करें', 'call.unmute': 'अनम्यूट करें',
    'call.cameraOff': 'कैमरा बंद', 'call.cameraOn': 'कैमरा चालू', 'call.captions': 'कैप्शन', 'call.you': 'आप',
    'call.pick': 'अपनी बोली जाने वाली भाषा चुनें, फिर जुड़ें।', 'call.pressJoin': 'शुरू करने के लिए जुड़ें दबाएँ। आपका माइक्रोफ़ोन इस्तेमाल होगा।',
    'call.waiting': '{name} के भाषा चुनने की प्रतीक्षा…', 'call.inCall': 'कॉल में', 'call.otherJoined': '{name} कॉल से जुड़े',
    'call.otherLeft': '{name} ने कॉल छोड़ी', 'call.otherSpeaking': '{name} बोल रहे हैं', 'call.otherMuted': '{name} ने माइक्रोफ़ोन म्यूट किया',
    'call.otherLanguage': '{name} अब {language} बोल रहे हैं', 'call.paused': 'दुभाषिया रुका है: प्रीपेड बैलेंस खत्म हो गया। आप {name} को बिना अनुवाद के सुन रहे हैं।',
    'call.untranslated': 'दुभाषिया उपलब्ध नहीं है। आप {name} को बिना अनुवाद के सुन रहे हैं।', 'call.ended': 'कॉल समाप्त हो गई है।',
    'call.left': 'आपने कॉल छोड़ दी। वापस आने के लिए जुड़ें दबाएँ।', 'call.replaced': 'यह लिंक एक नए लिंक से बदल दिया गया है। कृपया मिला हुआ नवीनतम लिंक इस्तेमाल करें।',
    'call.invalid': 'यह कॉल लिंक मान्य नहीं है।', 'call.micDenied': 'माइक्रोफ़ोन अवरुद्ध है। ब्राउज़र में माइक्रोफ़ोन की अनुमति दें, फिर जुड़ें दबाएँ।',
    'call.offline': 'कनेक्शन टूट गया। {seconds} सेकंड में फिर से जोड़ रहे हैं…', 'call.elsewhere': 'यह कॉल किसी दूसरी विंडो में खुली है।', 'call.latency': 'देरी {ms} ms',
    'call.otherVideo': '{name} का वीडियो', 'call.myVideo': 'आपका कैमरा', 'call.agent': 'सहायता', 'call.customer': 'ग्राहक',
    'chat.message': 'संदेश', 'chat.placeholder': 'संदेश लिखें…', 'chat.send': 'संदेश भेजें', 'chat.record': 'वॉइस संदेश रिकॉर्ड करें',
    'chat.loading': 'चैट खोली जा रही है…', 'chat.closed': 'यह बातचीत समाप्त हो गई है।', 'chat.invalid': 'यह चैट लिंक अब मान्य नहीं है', 'chat.conversation': 'बातचीत',
    'console.phoneNumbers.title': 'फ़ोन नंबर', 'console.phoneNumbers.intro': 'इन नंबरों पर कॉल करने वालों को दुभाषिया मिलता है। Twilio में हर नंबर का वॉइस वेबहुक (“A call comes in”, HTTP POST) उसके वॉइस URL पर सेट करें।', 'console.phoneNumbers.number': 'नंबर', 'console.phoneNumbers.answers': 'जवाब', 'console.phoneNumbers.newCall': 'हर कॉलर के लिए नई कॉल', 'console.phoneNumbers.pin': 'कॉलर PIN से जुड़ते हैं', 'console.phoneNumbers.languages': 'कॉलर की भाषाएँ', 'console.phoneNumbers.fromCountry': 'कॉलर के देश से', 'console.phoneNumbers.voiceUrl': 'वॉइस URL', 'console.phoneNumbers.copy': 'कॉपी करें', 'console.phoneNumbers.created': 'दर्ज किया गया', 'console.phoneNumbers.none': 'इस मोड में कोई फ़ोन नंबर नहीं है। POST /v1/phone_numbers से एक दर्ज करें।',
  },
};

/** Languages written right to left (by primary subtag). */
const RIGHT_TO_LEFT = new Set(['ar', 'he', 'fa', 'ur']);

/** The bundled languages, and the words each has. */
export const PAGE_LANGUAGES = Object.keys(CATALOGUE);
export const WORD_KEYS = Object.keys(EN);

/** `pt-BR` -> `pt`. */
export const baseLanguage = (tag) => String(tag || '').trim().split(/[-_]/)[0].toLowerCase();

/**
 * The page's words in `language`: `t(key, values)` fills `{name}`-style placeholders; a language or
 * a string the catalogue lacks falls back to English. `lang` is the language the words are in
 * (for the document's `lang`), `dir` its direction.
 */
export function translator(language) {
  const base = baseLanguage(language);
  const strings = CATALOGUE[base] || EN;
  const lang = CATALOGUE[base] ? base : 'en';
  const t = (key, values) => {
    const template = strings[key] ?? EN[key] ?? key;
    return template.replace(/\{(\w+)\}/g, (whole, name) => (values && values[name] !== undefined ? String(values[name]) : whole));
  };
  return { t, lang, dir: RIGHT_TO_LEFT.has(lang) ? 'rtl' : 'ltr' };
}

/** Sets `document`'s language and direction, and the text of every `[data-i18n]` element (`data-i18n-attr`: an attribute instead). */
export function translateDocument(root, language) {
  const words = translator(language);
  const html = root.documentElement || root;
  html.lang = words.lang;
  html.dir = words.dir;
  for (const element of root.querySelectorAll('[data-i18n]')) {
    const text = words.t(element.getAttribute('data-i18n'));
    const attribute = element.getAttribute('data-i18n-attr');
    if (attribute) element.setAttribute(attribute, text);
    else element.textContent = text;
  }
  return words;
}
