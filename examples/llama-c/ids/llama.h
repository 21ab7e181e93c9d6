/* llama-c-ids: main.c's names for the model of tfm_add_model(... NAME
 * llama_q) (two models linked into one build need two names). It declares no
 * tokenizer, so main.c reads and prints token ids. */
#ifndef LLAMA_C_IDS_LLAMA_H
#define LLAMA_C_IDS_LLAMA_H
#include "llama_q.h"

#define TFM_LLAMA_K_CACHE_DIM3 TFM_LLAMA_Q_K_CACHE_DIM3
#define TFM_LLAMA_K_CACHE_COUNT TFM_LLAMA_Q_K_CACHE_COUNT
#define TFM_LLAMA_V_CACHE_COUNT TFM_LLAMA_Q_V_CACHE_COUNT
#define TFM_LLAMA_LOGITS_COUNT TFM_LLAMA_Q_LOGITS_COUNT
#define tfm_llama_k_cache_t tfm_llama_q_k_cache_t
#define tfm_llama_v_cache_t tfm_llama_q_v_cache_t
#define tfm_llama_run tfm_llama_q_run
#endif
