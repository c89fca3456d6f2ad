Estoy trabajando.
Golpea a Tom.
Ayudé.
He vuelto.
Estoy de vuelta.
¡He vuelto!
Estamos de acuerdo.
¡Qué divertido!
Los pájaros vuelan.
Se terminó.
Se acabó.
Ahora márchate.
Ahora vete.
Ahora lárgate.
¡Buen tiro!
Tomás lo intentó.
Abre el candado.
Fallamos.
Hemos fallado.
Puedo cantar.
Soy honesto.
Mira esto.
Mirá esto.
Mirad esto.
Mire esto.
Miren esto.
¿Puedes ver?
¿Podéis ver?
Cuenta conmigo.
Cuenta conmigo.
No os peleéis.
No peleen.
No pelees.
Él envejeció.
Él tiene ocho años.
Está fingiendo.
Aquí vengo.
Ya estoy aquí.
Tengo dinero.
Necesito tiempo.
Estoy trabajando.
¿Nos vamos?
Esa es la vida.
Así es la vida.
Eso está correcto.
Se acabó.
Ya ha pasado.
Sos un langa.
Invita a salir a Mary.
Estoy trabajando.
Sí que lo quiero.
Tengo dinero.
Necesito un taxi.
Necesito espacio.
Soy anoréxico.
Estoy muy triste.
¿Tom tiene razón?
Es pan comido.
Es demasiado grande.
Mira esto.
Fíjate en esto.
Tom puede nadar.
Tom, despierta.
Venga, canta un poco.
Vamos, a cantar.
Queremos más.
Estamos adentro.
¿Puedo entrar?
Dame un trabajo.
Está leyendo.
Él está leyendo.
Estoy muy triste.
Yo disfruto escuchar música.
Me siento mejor.
Me gustan los relojes.
Yo amo el queso.
Yo te lo dije.
Quiero morir.
Voy a parar a Tom.
Voy a detener a Tom.
Voy a avisar a Tom.
Le advertiré a Tom.
Alertaré a Tom.
Soy huérfano.
Estoy horrorizado.
Estoy horrorizada.
No estoy ciego.
He vuelto.
Es mi caballo.
Demandemos a Tom.
¿Puedo entrar?
Abre el candado.
Nos vemos luego.
Fuimos jóvenes.
Estamos borrachos.
Respira hondo.
Café, por favor.
Todos están afuera.
Él miró hacia atrás.
Él habla mucho.
No lo uso.
Ni idea.
No tengo idea.
Escuché voces.
Me encanta leer.
Quiero respeto.
Yo era demasiado rápido.
Soy solo un niño.
Es demasiado grande.
¡Es maravilloso!
Ella confía en él.
Ellos estaban ocupados.
Atacarán.
Ellos atacarán.
Tom necesita ayuda.
Hemos fallado.
Hemos fracasado.
Lo hemos encontrado.
¿Para qué es?
¿Quién es ese chico?
Quien sea.
No te asustes.
¡Sostén la vela!
No escuché.
Me siento traicionada.
Me siento traicionado.
Encontré mi libro.
He vuelto.
Volví.
Amo este auto.
Hoy he conocido a Tom.
Quiero morir.
Me gustaría irme.
¿Es su libro?
¿No es mío?
Hoy hace fresco.
¿Puedo entrar?
Envíelo por correo aéreo.
Gracias por esto.
Es dudoso.
El autobús está lleno.
Son correctos.
¡Esto es un suicidio!
Tom maltrataba a Mary.
Tom abusaba de Mary.
Tom bebe vino.
Tom quiere ir.
Tom lo averiguará.
Somos recién casados.
Estamos recién casados.
Somos optimistas.
¿Dónde está la bolsa?
¿Quién es ese chico?
¿Quién está al mando?
¿Quién es tu esposa?
¿Por qué corriste?
Tú eres una amenaza.
Es usted una amenaza.
Sois una amenaza.
¿Puedo ver a mi hijo?
¿Te llamó Tom?
Él se portó mal.
Él me llamó gordo.
Le gusta cantar.
Ama cantar.
Él se endeudó.
Vengo todos los días.
Me siento importante.
Me gusta el aire fresco.
La hice feliz.
Quiero salir.
Me quedé asombrado.
Me quedé atónita.
He sido robado.
¿Qué ha pasado ahora?
Prepará la comida.
Ella lo derrotó.
Ella fue promovida.
Se acerca el verano.
Ellos tenían hambre.
Son estudiantes.
Tom tiene gallinas.
Tom es un manipulador.
Tom es un maquinador.
Tom es mi abogado.
Tom está silbando.
Oímos tiros.
Escuchamos disparos.
Lo sentimos, Tom.
¿Quién está al mando?
Me abandonaste.
Acércate un poco más.
La muerte es inminente.
¿Necesitas una bolsa?
Hasta mi mamá sabe.
Hasta mi mamá lo sabe.
El heno es para los caballos.
Él es todavía joven.
Él ya se fue.
Su auto está vacío.
Me defendí.
Me sentí muy feliz.
He olvidado su nombre.
Olvidé su nombre.
He olvidado su nombre.
Olvidé su nombre.
He olvidado su nombre.
Olvidé su nombre.
Se me olvidó su nombre.
Odio estar aquí.
Me gusta la pizza fría.
No te debo nada.
Toco la guitarra.
Creo que tengo razón.
Me gustaría quedarme de pie.
No soy olvidadizo.
Todavía estoy esperando.
¿Tom sigue aquí?
Además es más barato.
Es tan agradable aquí.
Mary es mi madre.
Nadie ha visto a Tom.
¡Hasta la próxima semana!
Envíamelo ahora.
Mándamelo ahora.
Le gusta cantar.
A ella le gusta cantar.
Toma la medicina.
La arena estaba tibia.
Ellos son muy grandes.
Ellos quieren decir problemas.
Tom es muy dulce.
Tom quería a su perro.
Tom estaba en coma.
Somos aventureros.
¿Qué es la felicidad?
¿Qué significa la felicidad?
¿Tú qué harías?
¿Qué salió mal?
¿Cuándo comemos?
Llama al 110 ahora mismo.
¿Te gusta correr?
No te enojes conmigo.
¿No sabes cómo?
Volvió a venir.
Él quiere un iPad 4.
Está siempre bromeando.
¿Cómo funciona eso?
¿Cómo funciona esto?
¿Qué tal funciona esto?
¿Cómo va esto?
¿Cómo se usa esto?
¿Cómo se utiliza esto?
Me encuentro mucho mejor.
Espero que yo te guste.
Me acabo de casar.
Me gusta la compañía.
Me gusta la empresa.
Vivo en la luna.
Acompañaré a Tom.
Voy con ella.
¿Tom está viendo la tele?
La mermelada viene en una jarra.
Por favor, paga la contribución.
Mándale un mensaje a Tom.
Mándele un mensaje a Tom.
Mándenle un mensaje a Tom.
Gracias por esto.
Los libros son nuestros.
La falda es verde.
La pollera es verde.
Las estrellas salieron.
Ellos son de poca confianza.
Este es el libro de Tom.
Este es el libro de Tom.
Tom se puso serio.
Tomás se mordió el labio.
Tom tiene pelo rizado.
Tomás es un poco ingenuo.
Tom se puso serio.
Tom se lo estaba pasando bien.
Tom se había quedado mudo.
Tom agitó los brazos.
Tom fue a Boston.
El perro de Tom es blanco.
Estamos de acuerdo.
Estamos en un acuerdo.
¿Para qué estoy aquí?
No me asustás.
No me das miedo.
No me das ningún miedo.
Bebiste demasiado.
Tomaste demasiado.
Usted tomó demasiado.
Tomaron demasiado.
Tú tomaste demasiado.
Tomó demasiado.
Ustedes tomaron demasiado.
Chicos, ¿tienen hambre?
Borra esa fotografía.
Elimina esa foto.
Borrá esa foto.
¿Tienes un hobby?
¿Te gusta correr?
No te enfades conmigo.
No te enojes conmigo.
¡No me hagas reír!
Todo el mundo lo hace.
Él tiene su habitación propia.
Él es guionista.
Estoy comiendo fideos.
No puedo aceptar esto.
Me encuentro mucho mejor.
Me aburro en casa.
Me bajé del tren.
No conozco a ninguno de ellos.
A mí también me gusta el inglés.
Me gusta tu artículo.
Debo de haberlo perdido.
He vuelto a escribir mi informe.
Reescribí mi informe.
He reescrito mi informe.
Volví a escribir mi informe.
Vi a Tom besar a Mary.
No iré a ningún lado.
No te estoy culpando.
¿Tomás es realmente feliz?
¿Es tiempo lo que usted necesita?
Eso no es un hospital.
Nevó en Boston.
Es facilísimo.
Es coser y cantar.
Empieza a hacer más calor.
Está haciendo más calor.
Es mío, no suyo.
Es mía, no suya.
Salta sobre la zanja.
Mi amigo es estúpido.
Mi teléfono se está actualizando.
Nadie hizo nada.
Nos vemos en dos días.
El día vendrá.
Eso fue muy rudo.
Se están burlando de ti.
Este pájaro no puede volar.
Este pájaro no sabe volar.
Ese pájaro no puede volar.
Ese pájaro no vuela.
Esta es mi computadora.
Esto es de mi padre.
Eso no tiene sentido.
Tom tocó la bocina.
Tom no puede ayudar a Mary.
Tom hizo un pésimo trabajo.
Tom pateó la pelota.
Tom amenazó a Mary.
Tom nunca fue feliz.
Tom ganó tres carreras.
Tres de las carreras fueron ganadas por Tom.
La madre de Tomás está muerta.
Estamos siendo observados.
¿Qué plan para hoy?
Todavía tenéis tiempo.
Todavía tienes tiempo.
¿De verdad lo necesitamos?
¿Oyes algo?
¿Quieres una entrada?
No me dejes nuevamente.
No me dejes de nuevo.
No te quedes en Boston.
No hables así.
No hables de esa manera.
Hasta mi mamá lo sabe.
Su libro me inspiró.
¿Cómo se lastimó Tom?
No lo sé con exactitud.
No sé exactamente.
Odio a las mujeres celosas.
Se me ocurre una buena idea.
Nunca hablo francés.
Voy frecuentemente a Boston.
Rechacé la oferta.
Rechacé la propuesta.
Viajé a Boston.
Quiero jugar a las cartas.
Estuve bien, ¿no?
Ojalá fuera inteligente.
Trabajo más que tú.
Tendré mi venganza.
Voy a tener mi venganza.
Estoy cerrando mi tienda.
Estoy enamorado de ella.
Estoy enamorada de ella.
¿Es Tom bueno besando?
¿Tom es bueno para besar?
¿Tom está en Boston ahora?
¿Está Tom en Boston ahora?
¿Es correcta esa respuesta?
Es un asunto complicado.
Está chupado.
Es facilísimo.
Es un trozo de tarta.
Es pan comido.
Está en el sótano.
No es nada grave.
No es nada serio.
Mary es la prima de Tom.
Quizás él no es joven.
Quizá no sea joven.
Súbete las mangas.
Encógete de hombros.
Toma tu medicación.
Eso es lo que ella dijo.
La ducha está rota.
Estos son mis lápices.
Este pájaro no puede volar.
Esto tiene mi aprobación.
Es mi primer día.
Esta lista es para ti.
Esta lista es para vosotras.
Esta lista es para vosotros.
Esta lista es para usted.
Esta lista es para ustedes.
Este libro estuvo muy bien.
Esos son los perros de Tom.
Hoy es 20 de octubre.
Tom no mató a Mary.
Tom no detuvo a Mary.
Tom es un evangelista.
Tom es un evangelizador.
Tom está en la ducha.
Tom parece ser muy feliz.
Sabemos dónde está Tom.
Nos conocimos en la iglesia.
Ambos nos llamamos Tomás.
Venimos de inmediato.
Venimos enseguida.
¿Cuándo nos vamos a casa?
¿Cuándo nos iremos a casa?
¿Por qué vienes aquí?
¿Por qué no respondes?
Te ves verdaderamente bien.
Tendrás que empezar.
Se acercó un anciano.
Boston es una ciudad agradable.
¿Podemos ponerle llave a esta puerta?
Cierra todas las ventanas.
¿Viniste en tren?
¿Conoces a esta dama?
¿Te gusta esta canción?
¿Querés probarlo?
¿Quieres probarlo?
¿Quieren probarlo?
¿Todavía no has comido?
Él ignoró su consejo.
Él buscó la llave.
¿Cómo pudo ocurrir eso?
Te traje flores.
No puedo hacer nada mejor.
No me gusta el béisbol.
Tengo recados que hacer.
Espero que entiendas.
Espero que comprendas.
Sé que esto es estúpido.
Lo necesito inmediatamente.
Necesito arrendar una habitación.
Estaba esperando por Tom.
Estaba esperando a Tom.
Fui hasta la puerta.
Habría querido verla.
Ojalá la hubiera visto.
Estaré afuera.
Iré a traer la pizza.
Voy a vomitar.
Sólo estoy pasando el rato.
Sólo estoy matando el tiempo.
Estoy cansado de estudiar.
Siempre te he odiado.
¿Es esto realmente francés?
¿No es tu camisa?
Podría ser importante.
Pasó ayer.
Ocurrió ayer.
Ha sido maravilloso.
No me va a pasar a mí.
Esto es realmente estresante.
Hablemos de hombre a hombre.
María dejó que Tom la besara.
Tal vez se puede reparar.
Bajen sus lápices.
Mantente totalmente quieto.
Ésa fue una decisión difícil.
Los otros chicos sonrieron.
No había cuarto de baño.
No había baño.
Parecían la mar de ocupados.
Parecían bastante ocupados.
Esas fotos son suyas.
Hoy es 20 de octubre.
Tom se cansa con facilidad.
Tom ha subido de peso.
Tomás está equivocado como siempre.
Tom estornudó con fuerza.
Tom estaba desilusionado.
Deberíamos de irnos ahora.
Cualquier cosa que diga está bien.
¿Qué teatro es ese?
¿Por qué no te callas?
¿Por qué sigue Tom aquí?
¿Por qué Tom está todavía aquí?
Tú sabes lo que queremos.
Te recuperaste rápido.
No eres tan aterrador.
Bebiste demasiado.
Las galletas se pueden congelar.
La galletas pueden congelarse.
¿Me puedes llevar donde Tom?
Las computadoras son máquinas.
¿Le viste salir?
¿Tienes un buen auto?
¿Estudias diariamente?
¿Estudias cada día?
¿Crees que ayudó?
¿Sabe Tom de eso?
No te enojes conmigo.
¡No alces la voz!
Él no conoce a ninguno de nosotros.
Se apoya en un bastón.
Se está poniendo un abrigo.
¿Cómo puedo explicar esto?
Compré un perro para él.
No puedo cantar tan alto.
No llego tan alto cantando.
No puedo cantar en tono tan alto.
No cocino muy bien.
Voy muy a menudo a esquiar.
Hice que arreglara mi reloj.
No conozco a ninguno de ellos.
Yo sé lo que mató a Tom.
Recuerdo muchas cosas.
Vi a Tom besar a Mary.
Vi a Tom besando a Mary.
Le di la mano.
Quiero que todos se vayan.
Estaba un poco nerviosa.
Estaba increíblemente aburrida.
No voy a ninguna parte.
No iré a ningún lado.
Es la letra de Tom.
Es bueno para el negocio.
Por favor, conduzca con cuidado.
Ordena tu cuarto.
Ordena tu habitación.
Ella tenía algo de dinero.
Tiene mucho dinero.
Ella ya está casada.
Es el apartamento de Tom.
Este es el apartamento de Tom.
Eso es una pregunta tonta.
Es barato, ¿no es así?
Eso no está en el archivo.
El computador se echó a perder.
Son grandes amigos.
A ellos les gusta recordar los viejos tiempos.
A ellos les gusta rememorar los viejos tiempos.
A ellos les gusta rememorar.
Esta es una carretera privada.
Este periódico es gratuito.
Este periódico es gratis.
Este diario es gratuito.
Esos son tus enemigos.
Tom también fue secuestrado.
Tom no nos ha pagado todavía.
Tom necesita ayuda.
Tom se puso sus lentes.
Nos iremos en una hora.
Lo que tenemos es suficiente.
¿De dónde vino?
¿De dónde vino?
¿Dónde está la cafetería?
Anota su dirección.
Apunta su dirección.
Eres un buen estudiante.
Has hecho una sabia elección.
Has tomado una sabia decisión.
Deberías de agradecerle.
Muchos niños los usan.
¿Os gusta el vino francés?
¿Quieres a tu familia?
Los coches eléctricos son silenciosos.
¡Salí de acá rápidamente!
¡Rápido, sal de aquí!
Él tiene mal gusto para mujeres.
Él es muy comprensivo.
No voy a ninguna parte.
No puedo hacerlo yo solo.
No puedo deshacer este nudo.
No puedo desatar este nudo.
No tengo mucho que hacer.
No necesito tu dinero.
Yo sé que estaba equivocado.
El lunes perdí mi trabajo.
El lunes perdí mi empleo.
He encargado muebles nuevos.
Encargué nuevos muebles.
Pedí muebles nuevos.
Todavía no lo hice.
Aún no lo he hecho.
Quiero ser lingüista.
Yo realmente estaba muy feliz.
Estaré ocupado hasta las dos y media.
Siempre estoy muy nervioso.
Me encuentro mucho mejor.
No trabajo para Tom.
He olvidado su nombre.
Llovió toda la semana pasada.
Estuvo lloviendo toda la semana pasada.
Estaba nevando aquel día.
No comencemos una pelea.
Supongamos que eso es verdad.
Mira, yo sé lo que vi.
Mary murió durante el parto.
¿Puedo telefonearle mañana?
¿Puedo llamarte mañana?
¿Puedo tomar una taza de té?
Mis padres se divorciaron.
Ninguna de mis amigas lo sabe.
Ahora entiendo lo que quieres decir.
Nuestra puerta siempre está abierta.
Ven a mi casa, por favor.
Venga a mi casa, por favor.
Inserte su tarjeta, por favor.
Ella apenas comió nada.
Ella apenas comió.
Ella salió a dar un paseo.
Los zapatos se venden por pares.
Hay alguien en la ducha.
Eso no tiene sentido.
Fue la gota que rebalsó el vaso.
Esta chaqueta tiene botones.
Este filete está demasiado duro.
Este reloj es caro.
Tom murió en un accidente.
Tom tiene tres hijas.
Tom le está ayudando a su esposa.
Tom es vago y malcriado.
Tom se está escudriñando la nariz.
Tom es muy interesante.
A Tom le gusta tomar cerveza.
Tom toca el acordeón.
Tom encendió la luz.
Tom miraba con atención.
Solo tenemos una oportunidad.
¿Qué le has dicho?
¿Cómo se llama tu esposa?
¿Cómo se llama tu mujer?
Ya no te ríes nunca.
Todo el mundo puede equivocarse.
Todos pueden cometer errores.
El pan se hace a partir de harina.
¿Puedes explicármelo?
¿Puede usted explicármelo?
¿Me lo puede explicar?
¿Me lo podría explicar?
¿Me lo podrías explicar?
¿Me lo pueden explicar?
¿Lo cosiste a mano?
¿Le parece divertido?
¿Me entiendes ahora?
Todo miembro debe asistir.
Todo era muy bueno.
El primero que llega, el primero que se sirve.
Quien primero viene, primero muele.
Suerte con eso, Tom.
¿Te has reunido ya con ella?
Él llegó tarde, como de costumbre.
Él volvió el agosto pasado.
Él me dio todo su dinero.
Él sabía que no podía ganar.
Él vivió una vida infeliz.
Aquí hay problema para ti.
Aquí hay un problema para ustedes.
¿Qué edad tienen tus hermanas?
¿Cuántos años tienen tus hermanas?
Dejé que Tom me besara.
Decidí irme a dormir.
Decidí acostarme.
No sé a ciencia cierta.
No te debo nada.
No reconozco a nadie.
No quiero perderte.
Dudo de que alguien lo haya dicho.
Me sentí mal por el niño.
Odio contradecirte.
Odio contradecirle.
Odio contradecirles.
Sabía que no podías esperar.
Me encanta coleccionar estampillas.
Necesito francés para mi trabajo.
Esa noche no dormí nada.
Creo que me voy a ir a la cama ahora mismo.
Creo que ella no puede responder.
Quiero que todos se vayan.
Quiero llamar a mi familia.
Me encuentro mucho mejor.
No soy nada bueno en matemáticas.
No se me dan nada bien las matemáticas.
Estuve ocupado esta semana.
No parece tan grande.
Llovió durante tres días.
Vayamos al hospital.
¿Puedo usar tu carro hoy?
¿Puedo usar su carro hoy?
¿Puedo usar tu carro hoy día?
¿Puedo usar su carro hoy día?
Mi día termina a las cinco en punto.
Mi trabajo es fregar los platos.
Mi reloj es puntual.
Nadie más que tú puede hacerlo.
Ahora vete a pasarlo bien.
Ahora andá a divertirte.
La ciencia es muy emocionante.
Ella hizo el muñeco para mí.
Gracias por entenderlo.
Gracias por comprenderlo.
Eso es realmente asqueroso.
Se pusieron muy nerviosos.
Este bebé tiene tres semanas.
Este ataúd está demasiado pesado.
Esta es tu última oportunidad.
Ésta es tu única oportunidad.
Esta pregunta no es fácil.
Tom pidió direcciones.
Tom se quitó la camiseta.
Tom se quitó la camiseta.
Tom se secó el pelo con una toalla.
Tom apagó la música.
Tom apagó la música.
Acordamos empezar temprano.
Nos faltaba un jugador.
Nos iremos en una hora.
¿Qué quieres exactamente?
¿Qué pasó el mes anterior?
¿Cuál era el apellido de Tom?
¿Cómo era el apellido de Tom?
¿Dónde está tu familia, Tomás?
¿Por qué es tan difícil la vida?
No pareces sorprendida.
No tienes respeto por ti mismo.
Sé amable con los animales pequeños.
¿Puedes sumar estos números?
¿Te criaste en Boston?
¿Creciste en Boston?
¿Se crió en Boston?
¿Creció en Boston?
¿Has alquilado un apartamento?
¿Alquilaste un apartamento?
Él actuó justamente hacia mi.
No puede ser un hombre honrado.
Él no conoce a ninguno de nosotros.
Intentó dominar el francés.
Creo que todo es un engaño.
Vine a pedirle un favor a Tom.
No sé qué hacen.
No quiero vivir acá.
No tengo tiempo para verte.
Oí un ruido detrás de mí.
Espero ser periodista.
Te besé en la mejilla.
Necesito salir de la ciudad.
Quiero que todos se vayan.
Quiero ser tu marido.
Salí con mi amigo.
Ojalá tuviera más amigos.
Me gustaría ir a nadar.
Me gustaría ir a bañarme.
Lo siento si te confundí.
¿Hay algún plan secreto?
En Okinawa llueve mucho.
Solo era el comienzo.
Es un proyecto ambicioso.
Esta noche llueve enérgicamente.
Esta noche llueve a cántaros.
Mary quería ser enfermera.
Mary quiso ser enfermera.
Mis hijos están en la escuela.
Un día él se suicidó.
Las cajas de plástico duran más.
Ella le aconsejó que no fuera.
Ella siempre se levanta a las seis.
Ella me dio una bonita muñeca.
Ella le miró con enfado.
Ella está refunfuñando algo.
Eso no pasó realmente.
Es lo que realmente quiero.
El cambio fue sobresaliente.
El hotel se incendió.
El rey abusaba de su poder.
Ellos corrigieron el documento.
Nunca pidieron ayuda.
Es la letra de Tom.
Este es un nuevo tipo de coche.
Esta pregunta no es fácil.
Hoy es 20 de octubre.
Tom le ganó a Mary en damas.
Tom ganó a Mary a las damas.
Tom no podía sentir nada.
Tom no se habla con Mary.
Tom no está hablando con Mary.
Tom se apresuró subiendo las escaleras.
Tom está disfrutando bajo el sol.
Tom no está casado con Mary.
A Tomás le gusta viajar solo.
Tom cerró la puerta de la cocina.
Tom le dio propina al taxista.
Tom fue muy grosero con Mary.
Tom no estaba en la reunión.
Tom faltó a la reunión.
Veinte familias viven aquí.
¿Eso qué logrará?
¿Qué plan para hoy?
¿Cuál es el plan para hoy?
¿Cuál es tu canción favorita?
¿Dónde podemos aparcar el coche?
¿En qué dirección ha ido él?
No pareces sorprendida.
Tienes que controlarte.
No estás del todo equivocado.
¿Ella puede soportar un viaje largo?
¿Tuviste un buen verano?
¿Recibiste mi paquete?
¿Todos ustedes hablan francés?
¿Quieres que continue?
Él aceptó la nominación.
Él tuvo una amarga experiencia.
Él se detuvo para hablarles.
Él se paró a hablar con ellos.
Le pagaron 10.000 dólares.
A él le hirió una bala.
Él fue herido por una bala.
Su familia se mudó a Brasil.
¿Cómo se lee este kanji?
¿Cómo se siente Tom acerca de eso?
Puedo contarte lo que sé.
Puedo contarle a usted lo que sé.
Puedo contaros lo que sé.
No sabía que Tom era rico.
No quiero vivir solo.
No quiero vivir sola.
Hice que el chico llevara mi bolsa.
Tengo una nueva dirección de correo electrónico.
Sé que solo era un sueño.
Nunca quise lastimar a Tom.
Me senté entre Tom y John.
Voy muy poco a la biblioteca.
Creo que Tomás está trabajando ahora.
Creo que ahora Tomás trabaja.
Trato de no leer las noticias.
¿Es eso lo que pasó aquí?
Mary es una muchacha muy trabajadora.
Mary es una chica muy trabajadora.
Mary se hace su propia ropa.
Nadie se preguntó nada.
Uno de mis hijos está malo.
Ella de repente se hizo famosa.
Eso no tiene sentido en lo absoluto.
Eso no tiene ningún sentido.
Los bailarines estaban agotados.
Las bailarinas estaban agotadas.
Todas las hojas han caído.
La luna no tiene atmósfera.
La Luna no tiene atmósfera.
La Luna carece de atmósfera.
El jabón me irritó los ojos.
La herida comenzó a sangrar.
Ellos eran hombres conservadores.
Típicos adolescentes.
Son jovenzuelos del montón.
Esto se considera correcto.
Hoy es 20 de octubre.
Tom no puede aceptar la verdad.
Tom no comparte su comida.
Tomás sale a correr todos los días.
Tomás corre todos los días.
Apuñalaron a Tom en el brazo.
Tom no tenía quien lo ayudara.
Tom es un asesor fiscal.
Tom va a disfrutar esto.
Tom es mayor de lo que parece.
Tom intentó descansar.
Tom trató de descansar.
Tom fue atacado por un lobo.
A Tom lo atacó un lobo.
Tenemos otras cosas que hacer.
Prometimos esforzarnos al máximo.
Prometimos hacerlo lo mejor posible.
Estamos teniendo un invierno suave.
¿Dónde encontraste la llave?
¿Por qué no os casasteis?
¿Por qué no te casaste?
¿Por qué no vienes conmigo?
No estás haciendo todo lo posible.
Esta noche estás preciosa.
Esta noche estás magnífica.
No necesitas hacerlo ya mismo.
Esto se te da muy bien.
En serio has estado ocupado.
Has estado ocupado en serio.
Tus hijos parecen estar sanos.
Tus sueños se han vuelto realidad.
¿Estás mejor, Tomás?
¿Estás enfermo? Te ves pálido.
¿Tienes que trabajar esta noche?
Buenas noches y dulces sueños.
Él juró que dejaría de fumar.
Estoy totalmente de acuerdo contigo.
Estoy completamente de acuerdo con usted.
Estoy completamente de acuerdo con vosotros.
Estoy completamente de acuerdo con ustedes.
Estoy totalmente de acuerdo contigo.
Puedo mostrarte las fotos.
Ni siquiera puedo pensar en eso.
Hice el trabajo en tres días.
Tengo ganas de ir de viaje.
Tengo una espina en el dedo.
Acabo de recibir tu carta.
Debería estar allí el lunes.
Creo que Tom debería comer más.
Pienso que es un gran escritor.
Pensé que Tom había muerto.
Creí que Tom estaba muerto.
Quiero que vea algo.
Aún no he terminado de leerlo.
Nunca he tomado comida china.
Nunca he cantado esto antes.
Es una cuestión complicada.
No se supone que pase.
Jackson se cayó de su caballo.
Muchos americanos culparon a España.
Mary murió durante el parto.
Ella estará aquí en seguida.
Alguien quiere jugar juegos.
Eso no tiene sentido.
Eso no tiene ningún sentido.
Es probablemente una buena idea.
La familia estaba en la miseria.
Esa máquina está averiada.
La máquina está inhabilitada.
El avión despegó a las siete.
La lluvia era muy fuerte.
No quedó nada.
No tienen nada en común.
Este es el final de mi historia.
Hoy es 20 de octubre.
Tomás y María adoptaron una niña.
Tom es un hombre muy peligroso.
Tom sabe que le creemos.
A Tom le gusta leer revistas.
Tom pintó la cerca de blanco.
Tom prometió ayudar a María.
Tom rara vez usa herramientas eléctricas.
Tom era sospechoso de homicidio.
La violencia debe ser eliminada.
¿En qué tonalidad está la sinfonía?
¿Cuándo nos vemos?
¿Por qué lo odiás tanto?
¿Por qué no me das dinero?
No estás casado, ¿no?
No estás casada, ¿no?
No estáis casados, ¿no?
No estáis casadas, ¿no?
Un mexicano le enseñó español.
Una mejicana le enseñó español.
Un hombre hambriento es un hombre enfadado.
Una lágrima rodaba en su mejilla.
¿Y qué pasó después?
¿Puedo hablar con el profesor?
¿Me ayudas a encontrar mis llaves?
¿Sabes cómo llegar?
¿Sabes cómo se llega allí?
¿Quieres ver a Tom de nuevo?
Cada uno de ellos tiene un auto propio.
Todos se apresuraron hacia Tom.
Todos parecen incómodos.
Su hermano es un buen conductor.
¿Cómo fue creado el universo?
Estoy totalmente de acuerdo contigo.
Concuerdo contigo al cien por cien.
Compré dos bolsas de palomitas.
Cambié la contraseña del WiFi.
Cambié la contraseña del wifi.
He cortado una rama del árbol.
Tengo que irme porque se hace de noche.
Realmente quiero otra oportunidad.
Quiero ver a Tom en una hora.
Quiero decirte la verdad.
Fui criada por Tom y Mary.
Desearía que pudiéramos volver a casa.
No me gustaría perderme de esto.
Estoy esperando a mi novio.
Yo que tú lo ignoraba.
Yo en tu lugar lo ignoraría.
¿En qué dirección ha ido él?
¿Puedo hablar con el profesor?
¿Puedo hablar con el profesor?
A la mayoría de la gente le gusta ver TV.
El cine es una gran distracción.
Ellos originalmente eran granjeros.
Se están agotando nuestras proviciones.
Las normas están hechas para romperlas.
Ella lo trajo adonde nosotros.
Enséñame cómo hacerlo, por favor.
Enséñame cómo se hace, por favor.
Siéntate y cierra los ojos.
Esa tienda tiene muchos clientes.
Eso es lo que siempre he dicho.
Esto es lo que está pasando aquí.
El papel está debajo de la mesa.
Ese problema está irresuelto.
El problema sigue sin resolverse.
Este traje es demasiado bueno para mí.
Hoy es 20 de octubre.
Tom alimentó a su perro con sobras de la mesa.
Tom espera que a Mary le guste aquí.
Tom dijo que estaba casado.
Tom se ve muy emocionado.
Tom le disparó a Mary con una escopeta.
Tom quiere algo para tomar.
Tom quiere beber algo.
No podemos perder ni siquiera un minuto.
Nos reunimos una vez al mes.
Llegamos a la estación a las seis.
Viajamos por toda Australia.
Tuvimos éxito haciendo eso.
Mereces algo mejor.
Merecéis algo mejor.
Deberías llamar al doctor.
Irás al colegio mañana.
Tú eres eficiente, ¿no es así?
Usted es eficiente, ¿verdad?
¿Normalmente llegas temprano o tarde?
¿Sabes siquiera qué es esto?
¿Crees que le gustará a Tom?
¿Creéis que le gustará a Tom?
¿Acaso hace una gran diferencia?
Todos excepto Tom parecen asustados.
Él encontró una pelota en el jardín.
Él es una persona sumamente importante.
Su auto se averió en el camino.
¿Cuánto querés gastar?
No sé en qué pensó Tom.
No quiero hacer eso hoy.
Yo almuerzo todos los días al mediodía.
Espero no haberte interrumpido.
Solo quiero tomar una foto.
Le confundí con su hermano.
La vi cruzar la calle.
Le hice una señal al auto para que fuera más lento.
Lo intenté, pero no pude hacerlo.
Lo intenté, pero no pude hacerlo.
Volveré en unos minutos.
No digo que estés equivocado.
Esta noche planeo estudiar.
Está nevando bastante ahí fuera.
Mi nombre estaba de tercero en la lista.
Ella no sale mucho.
Ella fingió ser una estudiante.
Ella estaba sorprendida de las noticias.
Su padre es un taxista.
Parece no haber duda sobre eso.
No hay nada más que pueda hacer.
No hay nada más que pueda hacer.
Estas galletas tienen forma de estrella.
Esos calcetines se han quedado fuera.
Esto es lo que puedo hacer por ti.
Este texto es incomprensible.
Tom invitó a Mary a su fiesta.
Tom es un consumado escritor.
Tom está muerto, pero la vida sigue.
Creo que Tom está disfrutando de esto.
Puede que Tom no sepa la respuesta.
Tom fue uno de los afortunados.
Los padres de Tom lo acompañaron.
Nosotros caminamos a través de un camino estrecho.
Queremos ayudarte con eso.
Lo haremos cuando tengamos tiempo.
Somos los únicos canadienses aquí.
Bueno, ¿qué estamos esperando?
¿A qué hora vuelves?
¿A qué hora cierra el banco?
¿A qué horas cierra el banco?
¿Dónde podemos conseguir lo que queremos?
¿Por qué vamos a Australia?
¿Por qué no le pedimos consejo a Tom?
¿Tendré que dar una conferencia?
¿Tendré que dar una charla?
¿Tendré que dar una clase?
Puedes terminar tu ensayo ahora.
No pareces muy satisfecho.
Me tiene que estrechar la chaqueta.
Estás enfermo. Debes descansar.
Estás enfermo. Tienes que descansar.
Eres muy valiente, ¿verdad?
Tu conducta fue imperdonable.
Tus padres deberían saberlo.
En la siguiente esquina, gira hacia la derecha.
¿Podrías ayudarnos después de la escuela?
¿De verdad tenemos que irnos ya?
¿Crees en la vida eterna?
¿Creen en la vida eterna?
¿Usted bebe alcohol todos los días?
¿Quieres salir de aquí?
Todos concordaron con su idea.
Todos estaban de acuerdo con su idea.
¿Has abierto esta puerta alguna vez?
¿Has entregado tu informe?
Llegó de paso a la librería.
Él viaja a Londres una vez al mes.
Él viaja a Londres mensualmente.
Él me ayudó a cargar la maleta.
Se sentó y leyó el periódico.
La salud vale más que el oro.
¿Cómo mataste a la cucaracha?
No creo en cuentos de hadas.
No tengo ganas de sentarme.
No sé dónde está mi reloj.
No quiero vivir solo.
Lo aprendí hace mucho tiempo.
Aprendí eso hace mucho tiempo.
Hace mucho tiempo que lo he aprendido.
Me gustaría comer en otro sitio.
Voy a echar de menos tu comida.
Voy a echar de menos tus platos.
Voy a echar de menos vuestra comida.
Voy a echar de menos su comida.
Voy a echar de menos vuestros platos.
Voy a echar de menos sus platos.
Cumplo treinta el próximo lunes.
Nunca he hecho mucho dinero.
Llevo toda la mañana en la cola.
Si yo tuviera veinte, podría votar.
Es de suma importancia.
Es algo que mi madre ha hecho.
Paró de nevar hace una hora.
Resultó que yo tenía razón.
Hace treinta grados bajo cero.
Quizás fui demasiado severo con Tom.
Ella le aconsejó que no lo hiciera.
Ella no puede controlar sus emociones.
Ella le reveló el secreto.
Ella valora más la salud que la riqueza.
¿Debo rellenar este formulario ahora?
Hasta aquí todo está bien.
El fuego comenzó en la habitación de Tom.
El fuego comenzó en el cuarto de Tom.
El hielo aguó el zumo.
Las calles están atascadas de carros.
Lo mismo pasó el lunes.
Los dos relatos no coinciden.
Aquí sirven comida excelente.
Esto es el doble de largo que eso.
Tom acompañó a Mary hasta Boston.
Tom hace las cosas a su manera.
Tom obtuvo el primer premio, ¿no es así?
Tom no ha visto este vídeo todavía.
Tom odia que nieve.
Tom identificó al autor.
Tom va a ver a Mary hoy.
Tom está jugando cartas con Mary.
Tom es más estúpido de lo que crees.
Tom está realmente preocupado por Mary.
Vivimos cerca de la gran biblioteca.
Necesitamos ordenar nuestra casa.
Te va a encantar este libro.
Se me ocurrió una maravillosa idea.
¿Estás liado este próximo lunes?
¿Te estás enamorando de mí?
¿Habláis del trabajo?
No esperes que otros te ayuden.
No confíes en que otros te ayuden.
¿Has traducido un libro alguna vez?
Él vive separado de sus padres.
¿Cuánto se gasta Tom al mes?
¿Cuánto gasta Tom en un mes?
Me quebré la pierna cuando era niño.
Claro que querría un reembolso.
No me di cuenta de que estabas despierto.
No sé qué hacen.
No entiendo cómo hacerlo.
Ya no quiero seguir haciendo esto.
Tengo derecho a ganarme la vida.
Tengo otro as en la manga.
Espero no olvidarme la cámara de fotos.
Sé que eso me haría feliz.
Yo pensaba que ya estabas muerto.
Solía ir al colegio con él.
Quiero que regreses conmigo.
Quería que supieras cómo me siento.
Ni siquiera estaba conduciendo tan rápido.
Contrataré a quienquiera que él recomiende.
Estoy buscando un empleo a tiempo completo.
Busco un trabajo de jornada completa.
Estoy buscando una casa para alquilar.
Disculpe por haber demorado en contestar.
Tengo ampollas en los dedos.
Sólo he hecho esto una vez.
Parece que Tom estuvo aquí.
María se depila las piernas todos los meses.
Mary trabaja como enfermera a tiempo parcial.
Mis zapatos son más pequeños que los tuyos.
Me preguntó si yo estaba bien.
Ella terminó de leer la carta.
Le gustaba hablar sobre sí misma.
La pelota rodó por el pasto.
En mi habitación hay muchos libros.
Hay muchos libros en mi cuarto.
Ellos tienen celos de nuestro éxito.
Hoy es día de elecciones en Polonia.
Hoy hay elecciones en Polonia.
Tom no tiene nada que ver con esto.
Tom es la media naranja de Mary.
Tom quizás no piense que esto sea gracioso.
Puede que Tom compre una tabla de surf hoy.
Tom necesita dos boletos a Boston.
Tom realmente me hizo sentir en casa.
Tom quiere que le hagas un favor.
Tom quiere que le hagas una gauchada.
Tom estaba locamente enamorado de María.
Tom estaba cansado y de mal humor.
Los zapatos de Tom le están demasiado grandes.
No queremos publicidad negativa.
¿Qué quieres que le diga a Tom?
¿Qué fruta es la que más te gusta?
¿Cuál es el precio de este reloj?
¿Cuánto vale este reloj?
¿A qué hora viene el cartero?
¿Por qué ustedes dos siempre están peleando?
¿Por qué no nos pasamos a verla?
Tus besos saben a canela.
Un hombre mojado no le teme a la lluvia.
Todo lo que podemos hacer es esperarle.
Todo lo que tienes que hacer es unirte a nosotros.
¿Quieres volver a Boston?
Que no se te olvide regar las plantas.
Eso lo puede entender hasta un niño.
Mañana levántate a las siete de la mañana.
¿Has tenido alguna vez una intoxicación alimenticia?
Él dedicó su vida a la educación.
Él dejó Japón para nunca volver.
¿Qué tan a menudo llueve en Boston?
Puedo oír un saxofón sonando en alguna parte.
Todavía puedo ver la cara de mi madre.
No me queda más opción que obedecerle.
Anoche no pude encontrar un taxi.
No dije que estuviera mal comer.
Ya no sé lo que quiero.
No quiero que Tom pierda su trabajo.
Finalmente tengo todo lo que necesito.
Odio tener que aparentar que me interesa.
Detesto tener que aparentar que me interesa.
Espero no haberte interrumpido.
Espero que Tom no se pusiera celoso.
Creo que debo pensar al respecto.
Creo que empezará pronto a llover.
Pensé que era solo una metáfora.
Le dije al policía lo que sabía.
Quiero saber a qué hora venir.
Estaba intentando ocultar mis arrugas.
Desearía que estuvieras conmigo aquí ahora.
Estaré sola después de que te vayas.
Soy el dueño de este restaurante.
¿La señora Smith es profesora de inglés?
¿Hay algo que yo debería saber?
Parece obvio que él está enfermo.
¡Mira! Hay un avión despegando.
¡Auch! ¡Me picó una abeja!
Ella le aconsejó que no lo hiciera.
Dígame cuando desee hacer su orden.
Eso es una pérdida de tiempo y dinero.
El avión aterrizó sin contratiempos.
Este avión aterrizó de forma segura.
Aún continúa la celebración.
El resultado fue realmente satisfactorio.
La jabonera es electrónica.
El texto está sin revisar.
Nosotros dos terminamos el año pasado.
La pared se ha pintado de amarillo.
Esta gente odia a todos los extranjeros.
Ellos la eligieron para alcalde.
Ellos habían sido derrotados en batalla.
Hoy es 20 de octubre.
Tom no sabía qué más decir.
Tom no levantó ni un dedo para ayudar.
Tom no tiene nada para comer.
Tom es muy posesivo, ¿no?
Tom ve esto de una manera diferente.
Tom quería comprar algunos recuerdos.
Los padres de Tom eran ambos profesores.
Muy pocos hombres gordos tienen narices largas.
¿Adónde te gustaría ir primero?
¿Por qué no llamaste una ambulancia?
¿Por qué carajo hiciste eso?
¿Por qué nadie hace nada?
Estás en mejor forma que yo.
¿Puedo montar a este caballo un rato?
¿Podrías llamarme esta noche, por favor?
¿Tienes novio allá en casa?
¿Tienes novio allá en tu rancho?
Él no les niega nada a sus hijos.
Se sentó allí cerrando los ojos.
Se sentó allí con los ojos cerrados.
Él fue la primera persona en llegar.
Volverá tarde o temprano.
¿Cuánto pesa una pelota de fútbol?
No puedo imaginarme un día sin ti.
Hoy tengo ganas de hablar francés.
Me cortaron el pelo en la barbería.
Aún no he terminado de leerlo.
No te he visto en tres años.
Necesito practicar todo lo que pueda.
Necesito que orines en este recipiente.
No debería haber reaccionado de esa manera.
Paso mi tiempo libre con mis pequeños.
Creo que has cometido un gran error.
Pensé que Tom estaría de acuerdo conmigo.
Pensé que Tom nunca aparecería.
Le dije a Tom que se mantuviera lejos de María.
Quiero oírte tocar piano.
Quiero mostrarte algo más.
Desearía tener tanto dinero como tú.
Busco un trabajo para mi mujer.
Lo siento pero no puedo dejarte marchar.
Acabo de estar en la oficina de correos.
¿El dolor es punzante o constante?
Pongamos el árbol de Navidad aquí.
Ella abandonó a su hijo a su suerte.
Está muy orgullosa de su hija.
Ella visitó a su marido en la cárcel.
Cuéntame tu historia. Soy todo oídos.
El chopo es un árbol de crecimiento rápido.
Se dice que ver es creer.
Esta idea de hecho es muy buena.
Hoy es 20 de octubre.
Tom y Mary esperan un bebé.
Tom y Mary están esperando un bebé.
Tom y María tienen tres hijas.
Tom está siendo perseguido por la policía.
Tom es dueño de un supermercado.
Tom echó agua caliente en la taza.
Tom sirvió algo de vino en un vaso.
Despiértame pronto mañana.
Despertame temprano mañana.
Todavía no encontramos al gatito perdido.
Todavía no hemos encontrado al gatito perdido.
¿Qué le dijo Tom a Mary sobre John?
¿Cuál es mayor, Japón o el Reino Unido?
¿Cuál es mayor, Japón o el Reino Unido?
¿Podrías bajarle a la tele, por favor?
Tienes el derecho de ser creativo.
Tienes el derecho de ser creativa.
Prometiste que siempre me querrías.
Todos mis amigos y mis familiares han muerto.
¿Trajiste a tu familia contigo?
¿Crees que le gustará a Tom?
¿Creéis que le gustará a Tom?
No me hagas responder esa pregunta.
Es el último hombre que acepta un soborno.
Él interpretó un rol menor en la obra.
Yo le pregunté a mi profesora que debía hacer a continuación.
Llegué a la misma decisión que tú.
No quiero ir al hospital.
Espero que estemos en casa para Navidad.
Solo quiero saber si me quieres.
Cuando era pequeña, me encantaba leer.
No creo que vaya a leer el informe de Tom.
Iré a hacer ciclismo aunque llueva.
Quisiera saber el paradero de Tom.
Te veré mañana en el desayuno.
He leído cada uno de esos libros.
He leído todos esos libros.
Es una historia basada en eventos reales.
Me duele la cabeza de tanto trabajar.
Ella aparcó el coche en una plaza libre.
Ella fue al hospital ayer.
Esa isla tiene un clima tropical.
Eso es todo lo que puedo decir en este momento.
No hay nada más que pueda hacer.
Tom apuntó su pistola al blanco.
Tom y Mary compraron una alfombra hecha a mano.
Tom ayudó a Mary a escapar de la prisión.
Tom, me gustaría que conozcas a alguien.
Tratamos de contactar al otro barco.
¿Cuál es tu canción de borrachos favorita?
¿Cuándo volviste de Boston?
¿Cuándo volvió de Boston?
¿Cuándo volvieron de Boston?
Tu consejo ha sido de gran ayuda.
Alrededor de treinta pobladores resultaron heridos.
¿Estás seguro de que nadie te siguió?
¿Estás segura de que nadie te siguió?
¿Terminaste de comer tu almuerzo?
¿Terminaron de comer su almuerzo?
Puedo ocuparme de eso inmediatamente.
Lo hacía a menudo cuando era más joven.
Lo hice anteayer.
No sé nada de física.
No quiero nada para Navidad.
Acabo de estar en la oficina de correos.
Tengo que plantar árboles en el jardín.
Yo también quiero un trabajo a tiempo parcial.
No era tan caro como yo pensaba.
No es algo para lo que sea muy bueno.
Señala las palabras que no entiendas.
Nadie entendió ese problema matemático.
Nada así sucederá otra vez.
Ella lo cremó en contra de su voluntad.
Ella tiene una fuerte repulsión hacia los insectos.
Ella está muy enfadada con sus hijos.
A algunos niños no les gustan las verduras.
Las estrellas no se ven durante el día.
Diga su nombre completo para que conste en acta.
Un problema tal es difícil de tratar.
El azúcar sustituyó a la miel como endulzante.
Gracias por dibujar un pájaro para mí.
La capital de Francia es París.
El capitán controla toda la nave.
El atardecer es realmente hermoso acá.
Su casa está lejos de la estación.
En el baño hay jabón líquido.
Se quedaron en el hotel una semana.
No nos van a dejar en paz.
Ellos no nos van a dejar en paz.
Ellas no nos van a dejar en paz.
No se supone que pase.
Tomás y María no van aún a la escuela.
Tomás y María fueron a la playa.
Tom negó haber dicho una cosa así.
Tom es un poco impulsivo, ¿no?
Tom está siendo perseguido por la policía.
Tom debería saberlo mejor a su edad.
Tom puso la sartén sobre la estufa.
Tom se negó a seguir el consejo de Mary.
¿Qué libros has leído en inglés?
¿Quién es tu piloto de carreras favorito?
Un crucero de lujo llegó al puerto.
Ayer ocurrió un horrible accidente.
Los niños deberían beber leche todos los días.
Los niños deberían tomar leche todos los días.
No es bueno engañar a los colegas.
¿Sabes a dónde va Tom a la escuela?
¿De veras quieres saber la verdad?
Todo el mundo sabe que él está aún vivo.
Él volvió a la casa más temprano de lo que esperaba.
Él no quiere trabajar en una fábrica.
Él me recomendó este diccionario.
Desearía poder retirar lo que dije.
Yo te daría la luna si pudiera.
Si pudiese, te daría la luna.
¿Visita mucha gente el museo?
No es seguro caminar solo de noche.
No debería llevarme mucho tiempo hacerlo.
Esa película era pero que muy interesante.
El gato llevaba un listón alrededor de su cuello.
La historia se ponía más y más interesante.
La temperatura cayó repentinamente.
Sus manzanas no son tan sabrosas como las nuestras.
Hay muchos peces en ese lago.
No había nada que él pudo haber hecho.
Este autobús te llevará al museo.
Este autobús lo llevará al museo.
Esos dos niños tenían la misma edad.
Tom y Mary peleaban como perro y gato.
Tom no sabe por qué lo llamó Mary.
Tom sueña con Mary de vez en cuando.
Tom siguió a Mary a la oficina de John.
Qué pena que sea demasiado joven para conducir un coche.
Tenemos que deshacernos de todo esto.
Tenemos que librarnos de todas estas cosas.
Su comportamiento nos pareció infantil.
¿Quién ha roto la ventana? Di la verdad.
Tú no viniste a la escuela ayer.
Ayer no viniste a la escuela.
No tienes que ocultar tus sentimientos.
No necesitas hacerlo ya mismo.
No necesita hacerlo inmediatamente.
Necesitas comer verduras todos los días.
Eres el nuevo secretario, ¿verdad?
¿Puede decirme por qué Tom está haciendo eso?
Él puede imitar al resto de la familia.
Él consideró que era una decisión acertada aceptar la oferta.
Se quedó en Nueva York por tres semanas.
Fue eximido de toda responsabilidad.
Me comí una hamburguesa y pedí otra.
No tengo nada que hacer ahora mismo.
Espero que todos tus sueños se cumplan.
Me percaté de que me estaba mirando.
Me di cuenta de que me mirabas.
Sólo tengo cuatro dedos en mi pie izquierdo.
Creo que Tom podría haberse perdido.
Amarré a mi perro al árbol en el jardín.
Quiero hablar con el gerente del hotel.
Estoy seguro de que ella volverá pronto.
No pudo haber venido en un peor momento.
Muchos campesinos murieron durante la sequía.
Mis colegas me recibieron muy cálidamente.
En esa carrera sólo compitieron cuatro caballos.
Las frases empiezan con mayúscula.
Le gustaba hablar sobre sí misma.
Los alemanes están a favor de la austeridad.
El niño liberó al ave de la jaula.
La conferencia salió según lo planeado.
La torre se inclinaba ligeramente hacia la izquierda.
Ellos tienen problemas. ¿Puedes ayudarles?
Ellas están en problemas. ¿Las puedes ayudar?
Esta casa no se va a poder vender así como está.
Tom estuvo de acuerdo en ayudar a Mary con su trabajo.
Tom es el que me dijo que hacer.
Tom podría no ser tan feliz como parece.
Tratar de corregir a ese niño es machacar en hierro frío.
Escríbeme un correo electrónico si se te place.
Si te apetece, escríbeme un correo.
Puede que quieras intentar ponerte a dieta.
Dijiste que se llamaba Tom, ¿cierto?
Debes hacer buen uso de tu tiempo.
Deberías leer los sonetos de Shakespeare.
Un pajarito me dijo que tú estabas ahí.
Después de una larga ausencia, él regresó a casa.
Los expertos están investigando el accidente.
¿Le has prestado tu auto alguna vez a alguien?
Salió de aquella prueba con toda felicidad.
No puedo expresarte el honor que es éste.
No pegué a Tom, aunque me pegó a mí.
Le expliqué a ella de lo que se trataba.
Sé que querías enseñarme algo.
Pensé que habías dicho que tu auto había sido robado.
Estaba aburrido así que di vueltas por la ciudad.
Te mostraré el auto que acabo de comprar.
No soy el único que ha hecho eso.
Estoy habituado a tomar decisiones difíciles.
Volvamos antes de que empiece a llover.
Mi hermana mayor va a trotar todos los días.
Le gente se alzó contra el rey.
El pueblo se alzó contra el rey.
Algunos creen en Dios, pero otros no.
Le felicitaron por su boda.
Tom y sus amigos se fueron al circo.
Tom no lo pudo haber hecho sin Mary.
Tom decidió que era hora de irse a dormir.
Tom estuvo en prisión durante tres años.
Tom puso las llaves en la mesa de la cocina.
Tom dejó muy claro lo que él quería.
Tom necesita usar una corbata en donde él trabaja.
Tom señaló algo en el suelo.
Tom parece divertirse provocando discusiones.
Tom desearía poder hacer un nuevo comienzo.
Tom se preguntaba por qué a Mary no le gustaba John.
Deberíamos eliminar esa regulación.
Sabes bien que no es verdad.
"¿Dónde está su libro?" "Está sobre la mesa."
¿Puedo usar este lugar para cultivar verduras?
¿Qué prefieres: jugar al ajedrez o a las damas?
El inglés es un idioma común en todo el mundo.
Todo lo que vive morirá algún día.
Él cambia su agenda de día a día.
A duras penas se hacía entender.
Disculpas a todos por llegar tarde.
Hasta ayer no sabía la verdad.
No tengo ganas de comer nada hoy.
No sé si tendré tiempo para eso.
Tengo que cambiar una cuerda a la guitarra.
Sea como sea, no te concierne.
Es hora de que nuestros hijos se vayan a la cama.
El terremoto de anoche fue de una gran magnitud.
La gente de tu edad a menudo tiene este problema.
Ella crió sola a los tres niños.
Ella hizo todo el camino desde Hokkaido para venir aquí.
El coche que te alquilé tiene un problema.
El niño perdido fue encontrado dos días después.
Todos los pasajeros abordaron el barco.
Hay unas tijeras sobre el escritorio.
Bajo el espejo había dos vasos.
Existe un grado de estrés en todos los trabajos.
En Canadá hablan inglés y francés.
Tom llamó a Mary y canceló su cita.
Tom se quejó del alojamiento.
Tom le explicó las circunstancias a Mary.
Tom planea llamarte justo después del almuerzo.
Tom fingió entender el poema de Mary.
Tom dijo que quería ver un poco de televisión.
Tom quería hablar acerca de alguien más.
¿Cuál es tu bebida alcohólica favorita?
"¿Dónde está su libro?" "Está sobre la mesa."
Elige una comida de cada parte del menú.
¿Crees que Tom podrá hacer eso?
Cincuenta familias viven en este pequeño pueblo.
Él me recordó que no olvidara mi pasaporte.
Puedo oír un saxofón sonando en alguna parte.
Yo no podía prever este evento.
No podía prever este evento.
No esperaba que Tom estuviera en la reunión.
No tuve problemas para encontrar su casa.
Tengo muchos amigos en el extranjero.
Tengo muchos amigos extranjeros.
Espero que nunca tengamos que volver a hacer eso.
Terminaré de leer el libro en una semana.
Me estoy devanando los sesos para encontrar una solución.
No es verdaderamente visible a simple vista.
No se puede distinguir a simple vista.
No es verdaderamente visible a simple vista.
No se puede distinguir a simple vista.
Déjanos en paz, y nosotros te dejaremos en paz.
La escuela acaba antes del mediodía los sábados.
Ella no es menos bella que su madre.
Ella quiere comprarle un regalo a su novio.
España fue gobernada por un dictador hasta 1975.
Por eso Tom no tiene novia.
La hora más oscura es justo antes del amanecer.
La inmensidad del universo es inimaginable.
Cuanto antes vuelva el otoño, mejor.
El profesor le permitió al muchacho volver a casa.
No hay una razón para no hacerlo.
Hay mucha competencia en el comercio.
Aquí hay un caballero que quiere verte.
Ellos realmente querían saber qué había pasado.
Esta mañana me he levantado más temprano que de costumbre.
Este servicio está temporalmente no disponible.
Este tren recorre entre Tokio y Hanata.
Tres elevado al cubo es veintisiete.
Tom le preguntó a John cuál era el apellido de Mary.
Tom me preguntó si quería una taza de café.
Tom me preguntó que si deseaba una taza de café.
Tom llamó a Mary para decirle que llegaría tarde.
Tom llamó a María para decirle que llegaría tarde.
Tom se suicidó cuando tenía treinta años.
Tom se suicidó a los treinta.
Tom no quiere hacer nada más que nadar.
Tom sólo quiere nadar.
Tom actualmente está trabajando en ese problema.
Tenemos familias que debemos cuidar.
Cuando escampe podremos seguir.
Hemos perdido toda esperanza de ser indemnizados.
¿Por qué nunca me sacas a cenar?
Estaré allí sobre las 10:00.
Estaré allí más o menos a las 10:00.
Harás exactamente lo que te digo.
Vas a hacer exactamente lo que te digo.
Tu nuevo peinado te hace ver más viejo.
Él la interrumpió mientras estaba hablando.
No sé cómo él puede vivir en este quilombo.
No quiero perder el tiempo hablando con Tom.
Te doy mi palabra de que dejaré de fumar.
No importa si venís o no.
Se decía que esa dama era una actriz.
Ella sonrió y aceptó mi regalito.
Muchas gracias de antemano por vuestra colaboración.
Muchas gracias en adelanto por tu cooperación.
El ejército avanzó lentamente por el río.
Desde fuera no se ve el jardín.
Lo único que quiero hacer es ir a pescar.
La muerte del presidente causó gran duelo.
Hay frases que todo el mundo conoce.
Aunque llovía, jugamos futbol.
Tom y María almuerzan todos los días juntos.
Tom entró en la habitación, con dos pizzas.
Tom debería estar aquí dentro de quince minutos.
Tom piensa que la escuela es una pérdida de tiempo.
¿Quién sabe lo que podría pasar en el futuro?
¿Te importaría si me siento en la misma mesa?
Cada palabra en este diccionario es importante.
Él tradujo una novela japonesa al francés.
Decidí no ir al cine nada.
No tengo la menor idea de qué hacer.
Han pasado siete años desde que nos casamos.
El chico parado en la puerta es mi hermano.
El periodista fue secuestrado por terroristas.
Terroristas secuestraron al periodista.
El anciano estaba sentado, rodeado por los niños.
Lo triste es que nadie nunca lo sabrá.
Probablemente, el tiempo será bueno mañana.
Decidieron derribar el viejo edificio.
Desenterraron una caja que contenía restos humanos.
Ellos incendiaron casas y graneros.
Tom tiene lo que se necesita para ser un buen profesor.
Tom compartió su cubeta de palomitas con Mary.
Tom fue condenado a cinco meses de prisión.
Tom volverá de Boston el lunes próximo.
¿Cuál es la montaña más alta que has escalado?
Incluso el hombre más fuerte no puede parar un tifón.
Ni siquiera el hombre más fuerte puede parar un tifón.
Él se decidió a mantener su plan en secreto.
Dijo que se había dejado la cartera en casa.
Dijo que había dejado su billetera en casa.
Él me enseñó el manuscrito de su nueva obra.
No puedo creer que disfrutaras esa película.
No me gusta sentarme tan cerca de la pantalla.
Tengo la impresión de haber estado aquí antes.
Sé que querías enseñarme algo.
He estado pensando en cuando éramos jóvenes.
Si estuviera feliz, tocaría mucho mejor.
A él le es imposible dejar de fumar.
No tenía muy claro lo que Tom quería.
No llueve fuerte. Es solo una llovizna.
María siempre trae su laptop consigo.
Cometió muchos errores al escribir el informe.
Dicen que hay fantasmas en esta casa vieja.
Este producto afirma que ayuda a perder peso.
Tom vive cerca de la playa pero no sabe nadar.
Tienes catarro, no gripe.
Todavía no te has lavado las manos, ¿verdad?
No debes juzgar a un hombre por su apariencia.
¿Puedes pasarme el periódico de encima de la mesa?
¿Cuánto tiempo al día pasas afeitándote?
Estés de acuerdo o no, voy a hacerlo.
Creo que es hora de que parta a la escuela.
Me pregunto por qué el tenis se jugará en minifaldas.
No tengo edad suficiente para sacarme el carnet de conducir.
No tengo la edad suficiente para conseguir una licencia de conducir.
Si no estás con nosotros, estás contra nosotros.
Almorcemos en el centro y veamos una película.
Mi padre se quejaba del ruido del tráfico.
Ella quiere comprarle un regalo a su novio.
Algo así no ocurre todos los días.
Se escucharon tres explosiones en la última hora.
¿Hasta qué hora permanece abierta su farmacia?
¿Qué piensas que lo hizo romper su promesa?
¿Cuál es la mejor manera de obtener un pasaporte?
Estés de acuerdo o no, voy a hacerlo.
¿Tiene algo bueno para la tos?
¿Quieres pasar por todo este dolor de nuevo?
O te quedas aquí solo, o te vienes con nosotros.
Él tenía tanto miedo que corrió por su vida.
No quería ir a la boda de Tom y Mary.
Quedé exhausto por caminar una distancia larga.
Creo que estoy verdaderamente enamorado por primera vez.
Me pareció oir a alguien golpeando la pared.
Me han dicho que estás buscando un cuidador.
McDonald's es famoso en el mundo entero por sus hamburguesas.
Ella me explicó cómo usar el secador de pelo.
Ya que tú preparaste la comida, yo fregaré los platos.
La lavadora está haciendo un ruido raro.
Hay tres niños en la piscina.
Apenas habían empezado cuando comenzó a llover.
Tom revisa su correo antes de desayunar.
Tom miró profundamente a los ojos de María y sonrió.
Tom miró profundamente a María a los ojos y sonrió.
¿Cuándo fue la última vez que rompiste tus lentes?
Puedes ser de gran ayuda cuando quieres.
Vas a recibir un montón de regalos de cumpleaños.
"¿Cuántos niños varones tienes?" "Solo tengo uno."
Él se fue a la cama después de haber terminado su tarea.
Todo lo que tienes que hacer es cuidar de ti mismo.
Todo lo que tú tienes que hacer es esperar a que yo regrese.
No ha podido venir porque se halla enfermo.
Él hacía girar muy rápidamente ambas baquetas en sus manos.
¿Cuánto se tarda en ir a Viena a pie?
¿Cuántas tarjetas de Navidad recibiste el año pasado?
Lo hice lavar mi auto por cien dólares.
Sabía que pasaría algo así.
Me recosté en el sillón y abrí el libro.
Hablé con el joven que parecía ser el mayor.
Pensé que te ibas a poner tu traje nuevo.
Quisiera leer libros sobre la historia japonesa.
Estoy tan ebrio ahora, que veo dos teclados.
Vivir tan cerca de la estación es conveniente.
Ella rara vez canta, pero yo creo que esta noche lo hará.
No suele cantar, pero creo que va a cantar esta noche.
Ella rara vez canta, pero yo creo que esta noche lo hará.
El coche-comedor va a la cabeza del tren.
La inundación me impidió cruzar el río.
Tom tiene el dinero suficiente para comprar la casa que quiere.
Tom dijo que él no sabe dónde vive Mary.
Tom le susurró algo a Mary y ella sonrió.
Necesitamos al menos ocho horas de sueño al día.
Al oír la noticia, ella colapsó en llanto.
Sin Tom, Mary no tendría nadie a quien acudir.
¿Te importaría si me tomo el resto de la leche?
¿Les importaría si me tomo el resto de la leche?
Se te pasó una palabra al copiar el cuaderno.
"¿De quién son estos calcetines?" "Son de mi hermana."
Un cerdo hormiguero adulto puede pesar hasta 100 kilogramos.
¿Eres más cercano a tu madre o a tu padre?
Vete con tus padres a la iglesia y reza por ella.
Él me pidió que pagara inmediatamente el dinero.
No soporto la idea de perderte para siempre.
Tuve que recurrir a amenazas para conseguir mi dinero devuelta.
Voy a dejar que hagas lo que quieras.
Estoy cansado de estudiar. Salgamos por un trago.
¿Es cierto que te irás a estudiar a Boston?
El dominio de un idioma extranjero requiere de paciencia.
Ella tuvo que hacerlo aunque no quería.
Como hace buen tiempo, tengo ganas de ir a dar un paseo.
El doctor le aconsejó a mi padre que dejara de fumar.
Este es el parque donde nos dijimos nuestro último adiós.
Estaban por dispararle a Tom, pero él no lo sabía.
La casa de Tom queda a solo tres cuadras de aquí.
Cualquier cosa en la que eres bueno contribuye a la felicidad.
¿Puede darme una breve descripción del ladrón?
Él asumió el liderazgo del partido político.
No puedo soportar la idea de que ella esté con otro hombre.
Tengo tres despertadores para no quedarme dormido.
Escuché que muchas chicas usan bikinis en esa playa.
Pensé que era imposible dormir tanto.
Ojalá pudiera averiguar cómo hacer más dinero.
He decidido estudiar más de ahora en adelante.
Si el café es demasiado fuerte, añádele algo más de agua.
No fue hasta entonces que me di cuenta de mi error.
No era necesario que trajera un paraguas.
Habría sido mejor si te hubieras quedado con Tom.
Está lloviendo y nos hemos olvidado de cerrar las ventanas.
Tal vez sea éste el motivo por el que Tom no esté hoy aquí.
La mayoría de los ciudadanos suizos hablan dos o tres lenguas.
Ella me pidió permiso para usar el teléfono.
Lleva zapatos de tacón para parecer más alta.
El médico me aconsejó que me pusiera a régimen.
El niñito está acostumbrado a hablar con adultos.
La mujer que se sienta allí es su esposa actual.
La mujer sentada por allá es su esposa actual.
Tom no sabe nada sobre criar niños.
Tom no sabe con exactitud cuándo va a llegar Mary a casa.
Tom es el único adulto que Mary conoce que no sabe manejar.
Tom fue incapaz de disuadir a Mary de casarse con John.
Creo que deberías haber comprado una marca más conocida.
Pensé que Tom apreciaría el regalo de María.
Si pudiera, liberaría a todos los pájaros enjaulados.
Mi permiso de conducir es válido por otros tres años.
Mi tío vivió en Washington durante dos años.
Ella se preguntó si debería dejarle ir o no.
Los rumanos de Transilvania hablan muy despacio.
El gerente se sentó en el banco con los brazos cruzados.
El anciano va siempre acompañado por su nieto.
Hay pájaros cantando dentro de la jaula, ¿no?
Tom quiere vivir en el campo después de retirarse.
No tienes edad suficiente para ir sola a nadar.
Después de la cena fuimos a dar una vuelta por la ciudad en mi auto.
El Cristianismo y el Islam son dos religiones diferentes.
El cristianismo y el islam son dos religiones diferetes.
Le conté a Tom la razón por la que no podría ir.
Fui al supermercado y compré un paquete de arroz.
Fui al súper y compré un paquete de arroz.
Empezó a llover a cántaros hace más de tres horas.
Es una noche maravillosa para nadar, ¿no crees?
Tal vez sea éste el motivo por el que Tom no esté hoy aquí.
Tiene una relación muy buena con sus estudiantes.
Ella agitó las dos manos para que él la pudiera encontrar.
Ese es el autor cuyo libro elogiaste ayer.
Los posters fueron inmediatamente retirados de la pared.
Tom postuló al puesto, pero no lo obtuvo.
Tom enmarcó la fotografía y la colgó sobre la cama.
Tom ofreció alimentar a mi gato mientras yo estaba fuera de la ciudad.
Dejamos de hablar para poder oír la música.
Por su acento, supongo que ese hombre es escocés.
Me enfado mucho cuando no responden a mis preguntas.
Pensé que sería un buen concierto, pero no lo fue.
Pospondré mi viaje a Escocia hasta que haga más calor.
Disculpe, pero no quiero estar involucrado en eso.
Perdón, pero no me quiero involucrar en esto.
Puede que hayas entendido mal el objetivo de nuestro proyecto.
Los Estados Unidos lanzaron una bomba atómica sobre Hiroshima en 1945.
La pareja se separó, para no volver a verse nunca más.
Tom podía sentir que Mary estaba tratando de impresionarle.
Tom vino por primera vez a Japón cuando tenía tres años de edad.
Tom dice que ya no puede ignorar más el comportamiento de Mary.
Tom no se sorprendería si Mary decidiera no ir.
Puedes tomar este libro siempre y cuando lo mantengas limpio.
¿Podrían hacerme un favor? ¿Podrían prestarme dinero?
Los hechos no dejan de existir por ser ignorados.
Tuve que morderme el labio para evitar reírme.
Suena como si goteara el grifo de la cocina.
Hacía tanto calor que pensé que me iba a desmayar.
Nada más llegar al pueblo, fue derecho a verla.
Uno de sus tres autos es azul, y los otros rojos.
Se habla español en la mayoría de los países sudamericanos.
Los estudiantes deberían utilizar los libros de la biblioteca.
Había algunas manchas de tinta en la tapa de ese libro.
A Tom no le gustaba la idea de que Mary saliese con John.
¿Qué necesita decir Tom para que Mary lo perdone?
Aún cuando estaba lloviendo, ellos fueron de excursión.
No podía superar el deseo de fumarse otro cigarro.
No tengo un vestido decente para tal ocasión.
Escuché a Tom murmurándose a sí mismo mientras lavaba los platos.
Si necesita más información, estaremos encantados de enviársela.
Tal vez deberíamos ir a Boston la próxima semana a visitar a Tom.
Ella no cederá una pulgada sin importar lo que cualquiera diga.
El paciente estaba tumbado en la cama con los ojos cerrados.
La bella cola del pavo ayuda a atraer a las hembras.
Negro o blanco, un gato que atrape ratones es un gran gato.
¡Eh, un momento! ¿Estás pensando lo mismo que yo?
¡Eh, un momento! ¿Estáis pensando lo mismo que yo?
¡Eh, un momento! ¿Está pensando lo mismo que yo?
¡Eh, un momento! ¿Están pensando lo mismo que yo?
Tengo un asunto complicado que quiero comentar contigo.
Nunca imaginé que tanta gente vendría a mi fiesta.
Si se usa bien, esta herramienta será de mucha utilidad.
¿Cuántas tazas de café sueles beber al día?
El doctor te recomendó que dejaras de fumar.
El profesor leyó un pasaje de la Biblia ante toda la clase.
El maestro le leyó un párrafo de la Biblia a la clase.
Tom fingió no saber nada acerca de la situación.
Tom quería aprender cómo vive la gente en otros países.
Infortunadamente, pocos pasajeros sobrevivieron a la catástrofe.
¿Cuáles son algunas de los alimentos más populares que se comen en España?
Realmente deberías dejar eso. Arruinará tu salud.
Él se cruzó con su viejo amigo mientras caminaba por el parque.
Me gusta tomar a sorbos un margarita con sal al borde del vaso.
Siempre me he preguntado cómo será tener hermanos.
Mi madre tiene licencia de conducir, pero no conduce.
Como estaba muy bebido, no pudo llevar el coche de vuelta a casa.
Hay rumores de que encontraron oro en ese valle.
Hasta donde yo sé, esta es la única traducción disponible.
Ni siquiera la cirugía plástica hará nada con tu fealdad.
Asumo que oíste sobre lo que pasó aquí ayer.
Me levanté a las cuatro, comí algo y me volví a dormir.
Creo que es muy improbable que Tom aparezca hoy.
Saquemos una fotografía de nosotros con el mar en el fondo.
¿Puedo preguntar por qué no quieres hablar de eso?
¿Puedo preguntarte por qué no quieres hablar de ello?
¿Puedo preguntaros por qué no queréis hablar de ello?
¿Puedo preguntarle por qué no quiere hablar de ello?
¿Puedo preguntarles por qué no quieren hablar de ello?
¿Sería ético sacrificar a una persona para salvar a muchas?
Aún cuando estaba lloviendo, ellos fueron de excursión.
No aprendí todo lo que necesitaba saber en el jardín infantil.
No creo que él logre recuperarse algún día de la pérdida de su esposa.
No es muy varonil hablar mal de los otros detrás de sus espaldas.
Las reglas del colegio exigen que los estudiantes usen uniformes escolares.
Las reglas de la escuela obligan a los estudiantes a usar uniforme escolar.
Tom admitió que siempre tiene problemas para recordar nombres.
Tom no intentó convencer a Mary de que él era inocente.
No tengo nada que ver con el accidente, y no sé nada.
Parece que los niños deberán dormir en el piso.
Parece que los niños tendrán que dormir en el suelo.
Los pulpos y los calamares no son los únicos animales con tentáculos.
Bastantes personas no pudieron reconocerlo con ese disfraz.
El otro día fui a pescar por primera vez en mi vida.
Tom ha estado con Mary en este parque al menos doce veces.
Lo que le falta en carisma, ella lo compensa con trabajo duro.
Abrió la boca como si fuera a hablar, pero no dijo nada.
Hay que hacer una distinción entre los dos sonidos.
Tom no sabía que Mary estuviera interesada en la música clásica.
A pesar de que sabemos que fumar es perjudicial, la gente continúa fumando.
Sólo con mirarte a la cara ya sé que traes buenas noticias.
Mary está enamorada de un apuesto muchacho de su clase llamado Tom.
Ayúdame a elegir un suéter que combine con mi nuevo vestido, por favor.
Abrió la boca como si fuera a hablar, pero no dijo nada.
El hígado y el páncreas forman parte del aparato digestivo.
Ellos construyeron su imperio en Perú hace aproximadamente quinientos años.
Tom solo había planeado quedarse un día o dos en Boston.
¿Estás absolutamente seguro de que quieres vender la guitarra de tu padre?
Las bibliotecas ofrecen varios otros servicios aparte de prestar libros.
Asumo que oíste sobre lo que pasó aquí ayer.
¡Simplemente no sé cómo seré capaz de cumplir con todos los plazos!
Ella soltó intencionalmente su pañuelo para llamar su atención.
Este medicamento no se debe dejar al alcance de los niños.
Tom no distingue entre geografía y geología.
El armario de una mujer no está completo sin un pequeño vestido negro.
A partir de ese momento, sintió odio eterno hacia sus opresores.
Esta compañía fabrica doscientos autos por día.
"Tal vez no sea rico, pero al menos tengo novia", dijo Tom.
Se mantuvo cerca de ella e intentó protegerla del tifón.
La pintura en la pared es la que pintó Tom el verano pasado.
Tom y Mary estaban hablando en francés cuando John entró a la habitación.
Esto es como pelear con alguien con una mano atada a la espalda.
¿Sería usted tan amable de prestarme su móvil, por favor?
Tom sabía la verdad, pero no dejó que nadie supiera que él lo sabía.
Incapaz de cumplir la tarea por sí solo, él acudió a mí por ayuda.
Tanto Tom como Mary trabajaron en supermercados mientras estaban en la universidad.
Me gustaría tomar al menos una botella más de cerveza antes de ir a casa.
La tasa de desempleo en Japón era del 3,4 por ciento en septiembre de 2015
Hasta donde yo sé, esta es la única traducción disponible.
Tanto Tom como Mary trabajaron en supermercados mientras estaban en la universidad.
Tom preferiría dejar a Mary salirse con las suyas que tener una discusión.
¿Me puedo quedar con los pedazos rotos de porcelana que hay ahí fuera, en la cabaña?
Tom dio una gran fiesta en su casa mientras sus padres estaban de vacaciones.
La Policía comparó las huellas digitales en el arma con las de la puerta.
No me apetece rellenar este cuestionaro. Hay demasiados detalles.
Ella prometió que me pagaría esta semana, pero no mantuvo su palabra.
Él me dio su dirección, pero desafortunadamente yo no tenía un papel donde anotarla.
Mi abuelo paterno celebra su 88 cumpleaños mañana.
Tom apretó la garra de la palanca bajo la cabeza del clavo y sacó el clavo.
Al toser o estornudar, cúbrete la boca con la manga o con un pañuelo.
Al toser o estornudar, cúbrase la boca con la manga o con un pañuelo.
Los derechos de cada hombre disminuyen cuando se amenazan los derechos de un hombre.
Tom tomó miles de fotos durante sus vacaciones, pero nunca las miró.
Tom quiere comprar un reproductor de ocho pistas para poner en el coche que le dio su abuela.
Tom quiere comprar un reproductor de ocho pistas para poner en el auto que le regaló su abuela.
En el momento del accidente, casi todos los pasajeros del colectivo estaban durmiendo.
Si no haces lo que te digo, no me puedo hacer responsable de las consecuencias.
Si no haces lo que te digo, no me puedo responsabilizar de las consecuencias.
"La próxima vez, vayamos al cine." "¿Qué te hace pensar que habrá una próxima vez?"
Me gustaría aprovechar esta oportunidad para agradecerles a todos su colaboración.
Damas y caballeros, debido a un accidente en el aeropuerto, nuestra llegada se retrasará.
Si pudieras volver en el tiempo y empezar tu vida otra vez, ¿de qué edad te gustaría empezar?
Amnistía Internacional suele organizar protestas públicas en apoyo de prisioneros políticos.
Antes de que comencemos, me gustaría decir unas palabras acerca de cuán importante es este trabajo.
A menudo, cuanto menos justificable es una tradición, más difícil es librarse de ella.
En la conversación, es posible averiguar ciertas cosas acerca del otro con mucha facilidad.
Jamás trabajes con cableado eléctrico sin desconectarlo; es una mala idea. Lo sé por experiencia.
Roger Miller aprendió a tocar la guitarra y el violín. Mucho más tarde, aprendió a tocar la batería.
Ese cuchillo no estaba afilado y no podía cortar la carne con él, así que recurrí a mi navaja.
Antes de salir de la cama, dedico un momento a pensar sobre lo que haré durante el resto del día.
Si me hubieras hablado antes al respecto, yo podría haber estado libre. Como sea, mañana tengo planes de volver a casa.
