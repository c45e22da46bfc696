// Relative L2 per position of two float32 .npy logits files [steps, vocab] (the first against the second).
// g++ -O2 cmpnpy.cpp -o cmpnpy && ./cmpnpy GOT.npy REF.npy [EVERY]
#include <cstdio>
#include <vector>
#include <fstream>
#include <string>
#include <cmath>
#include <cstring>
std::vector<float> rd(const char* p, size_t& V){ std::ifstream f(p,std::ios::binary); std::string d((std::istreambuf_iterator<char>(f)),{});
 size_t hl=(unsigned char)d[8]|((unsigned char)d[9]<<8); std::string h=d.substr(10,hl); size_t s0=h.find("(");size_t c=h.find(", ",s0); size_t e=h.find(")"); V=std::stoul(h.substr(c+2,e-c-2));
 std::vector<float> v((d.size()-10-hl)/4); memcpy(v.data(),d.data()+10+hl,v.size()*4); return v; }
int main(int argc,char**argv){ size_t V; auto a=rd(argv[1],V); auto b=rd(argv[2],V); int S=std::min(a.size(),b.size())/V; int every=argc>3?atoi(argv[3]):32; double worst=0;
  for(int i=0;i<S;i++){ double n=0,dd=0; for(size_t k=0;k<V;k++){ double e=a[i*V+k]-b[i*V+k]; n+=e*e; dd+=double(b[i*V+k])*b[i*V+k]; }
   double r=sqrt(n/dd); worst=std::max(worst,r); if(i<2||i%every==0||i==S-1) printf("  pos %4d %.3e\n",i,r); } printf("worst %.3e over %d\n",worst,S); }
